#!/usr/bin/python3
"""The driver across the device's life: what a previous driver left on,
a commit the device refuses behind the driver's back, unbinding with page
flips in flight, suspend to RAM, and a device that stops latching
(x-stall).

One boot of a two-head pvdc on q35 with S3 enabled, interrupts through
INTx (pci=nomsi: a shared, level-triggered line is what an unbind must not
leave asserted) and iomem=relaxed, so that pvdc-poke can read and write the
device's registers without being a DRM client.  The host watches the
device through QMP: its statistics, screendumps, the SUSPEND and WAKEUP
events, and every register read of the driver (QEMU's trace).
"""

import errno
import os
import re
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pvdc_harness import (KERNEL_LOG_CASE, GuestError,  # noqa: E402
                          GuestVM, MmioReads, guest_cases,
                          kernel_log_context, kernel_log_reports,
                          register_constants, run_suite)
from pvdc_paths import ROOT  # noqa: E402

HEADS = 2
DEVICE = f"pvdc,id=pvdc0,heads={HEADS}"
# PS_CTRL of plane 0 (head 0's primary) in the shadow window, and a
# reserved bit of it (docs/specs/pvdc.rst: PVDC_PS_CTRL_VALID_MASK).
PRIMARY0_CTRL = 0x4000
RESERVED_BIT = 0x80000000


def pvdc_bdf(vm):
    vendor, device = (register_constants()[f"PVDC_PCI_{what}_ID"]
                      for what in ("VENDOR", "DEVICE"))
    out = vm.check("for d in /sys/bus/pci/devices/*; do "
                   "[ \"$(cat $d/vendor):$(cat $d/device)\" = "
                   f"{vendor:#06x}:{device:#06x} ] && echo $d; done; true")
    return out.strip().split("/")[-1]


def loaded(vm):
    """pvdc bound to the device, whatever a failed case left."""
    if vm.run("[ -e /dev/dri/card0 ]")[0] == 0:
        return
    if vm.run("[ -d /sys/module/pvdc ]")[0]:
        vm.check("insmod /lib/modules/pvdc.ko")
    else:
        vm.run(f"echo {pvdc_bdf(vm)} > /sys/bus/pci/drivers/pvdc/bind", 120)
    if not vm.poll("[ -e /dev/dri/card0 ]", 30):
        raise GuestError("pvdc does not bind")


def flipping(vm, heads, seconds):
    """pvdc-flipbench in the background, once its flips have started."""
    loaded(vm)
    return vm.start_background(f"pvdc-flipbench -k {heads} -t {seconds}",
                               r"^# flipping")


def plane_mask(vm):
    """The device's active planes, read through BAR0 (pvdc-poke status)."""
    m = re.search(r"^on (0x[0-9a-f]+|0) (0x[0-9a-f]+|0)$",
                  vm.check("pvdc-poke status"), re.M)
    return int(m.group(1), 16), int(m.group(2), 16)


def probe_sanitizes(tap, vm):
    """What a previous driver left on, overlays of one head shown on the
    other, is turned off by probe: no commit refused, no overlay left."""
    def check():
        loaded(vm)
        vm.check("rmmod pvdc")
        out = vm.check("pvdc-poke leave-on")
        heads, planes = plane_mask(vm)
        print(f"# left on: heads {heads:#x}, planes {planes:#x}")
        if heads != (1 << HEADS) - 1 or bin(planes).count("1") != 2 * HEADS:
            raise AssertionError(f"leave-on did not leave it on:\n{out}")
        rejected = vm.qom_get("x-commits-rejected")
        vm.check("insmod /lib/modules/pvdc.ko")
        if not vm.poll("[ -e /dev/dri/card0 ]", 30):
            raise AssertionError("probe failed:\n" + vm.dmesg()[-3000:])
        # fbcon lights the heads again, with their primary planes only; a
        # kernel on which pvdc gets no fbdev device leaves all off.  The
        # debug kernel has no /proc/fb but its fbdev emulation works.
        fbdev = "pvdcdrmfb frame buffer device" in vm.dmesg()
        expect = "on 0x3 0x21" if fbdev else "on 0 0"
        if not vm.poll(f"pvdc-poke status | grep -q '^{expect}$'", 30):
            raise AssertionError(f"planes after probe: {plane_mask(vm)}, "
                                 f"expected {expect!r}")
        if vm.qom_get("x-commits-rejected") != rejected:
            raise AssertionError("the device refused the sanitizing commit")
    tap.case("probe turns off heads left on with planes of other heads",
             check)


def refused_commit_resyncs(tap, vm):
    """A commit the device refuses though it passed the checks (here: a
    shadow register written behind the driver) is reported loudly, and the
    driver rewrites the head: the next flips are applied again."""
    def check():
        log = flipping(vm, 1, 6)
        before = vm.qom_get("x-commits-rejected")
        vm.check(f"pvdc-poke write {PRIMARY0_CTRL:#x} "
                 f"{RESERVED_BIT | 1:#x}")
        out = vm.wait_for_output(log, r"^flipbench total", 60)
        after = vm.qom_get("x-commits-rejected")
        if "error=" in out or after == before:
            raise AssertionError(f"rejected {before} -> {after}:\n{out}")
        # Resynchronized: flips go on and the device takes them.
        out = vm.check("pvdc-flipbench -k 1 -t 2", 60)
        again = vm.qom_get("x-commits-rejected")
        print(f"# x-commits-rejected: {before} -> {after} -> {again}")
        if again != after or "error=" in out:
            raise AssertionError(f"still refused ({after} -> {again}):\n{out}")
        log = vm.dmesg()
        warns = [l for l in log.splitlines() if "WARNING:" in l]
        if len(warns) != 1 or "refused commit" not in log or \
                "resynchronizing" not in log:
            raise AssertionError(f"kernel log:\n{log[-4000:]}")
    tap.case("a commit the device refuses is reported and the head "
             "resynchronized", check)


def unbind_with_flips_in_flight(tap, vm):
    """Unbind while two heads flip: every flip the driver took completes
    (the client sees ENODEV, never a lost event), the INTx line is left
    quiet, and the driver binds again."""
    def check():
        bdf = pvdc_bdf(vm)
        log = flipping(vm, HEADS, 30)
        vm.check(f"echo {bdf} > /sys/bus/pci/drivers/pvdc/unbind", 60)
        out = vm.wait_for_output(log, r"^flipbench total", 60)
        if "Connection timed out" in out or "flips=0 " in out:
            raise AssertionError(f"a flip never completed:\n{out}")
        if "No such device" not in out:
            raise AssertionError(f"flips went on after the unbind:\n{out}")
        vm.stop_background(log)
        log = vm.dmesg()
        if re.search(r"nobody cared|Disabling IRQ|WARNING:|BUG:", log):
            raise AssertionError(log[-4000:])
        vm.check(f"echo {bdf} > /sys/bus/pci/drivers/pvdc/bind", 60)
        if not vm.poll("[ -e /dev/dri/card0 ]", 30):
            raise AssertionError("no card0 after bind:\n" + log[-3000:])
        log = vm.start_background("pvdc-modeset 0", r"^# holding")
        out = vm.stop_background(log)
        if "not ok" in out:
            raise AssertionError(out)
    tap.case("unbind with flips in flight completes them and leaves the "
             "line quiet; bind again", check)


FAIL_FUNCTION = "/sys/kernel/debug/fail_function"
# The steps of the driver's probe that unwind what the ones before set up,
# in order (pvdc_pci_probe(), ALLOW_ERROR_INJECTION): the device brought
# to a known state with the clock sync running, the KMS objects, the
# interrupt handler, and registration with the interrupts enabled.
PROBE_STEPS = ("pvdc_sanitize", "pvdc_kms_init", "pvdc_irq_init",
               "pvdc_register")
# kmemleak's reports that are the driver's or DRM's.
LEAK_CODE = ("pvdc", "drm")


def fail_next_call(vm, function, err=errno.ENOMEM):
    """Make the next call of the driver's FUNCTION return -ERR without
    running it (fail_function: probability 100, once)."""
    f = FAIL_FUNCTION
    if vm.run(f"grep -qw '^{function}' {f}/injectable")[0]:
        raise AssertionError(f"{function} is not in {f}/injectable (inlined, "
                             "or not marked ALLOW_ERROR_INJECTION)")
    vm.check(f"echo {function} > {f}/inject && "
             f"printf %#x -{err} > {f}/{function}/retval && "
             f"echo 100 > {f}/probability && echo 1 > {f}/times && "
             f"echo 1 > {f}/verbose")


def fail_no_more(vm, function):
    vm.check(f"echo '!{function}' > {FAIL_FUNCTION}/inject")


def driver_reports(log):
    """kernel_log_reports(LOG) but the one fail_function itself causes:
    Linux 6.12's should_fail_ex() draws its random number in the kprobe's
    int3 handler, which lockdep counts as NMI context, and reports the
    random pool's lock as taken there ("inconsistent lock state"); lockdep
    is off after that report."""
    return [r for r in kernel_log_reports(log)
            if "fei_kprobe_handler" not in kernel_log_context(log, r[1])]


def int_enable(vm):
    """INT_ENABLE as the device holds it (pvdc-poke, bound or not)."""
    reg = register_constants()["PVDC_REG_INT_ENABLE"]
    return int(vm.check(f"pvdc-poke read {reg:#x}").strip(), 16)


def probe_fails_at(tap, vm, step):
    """Probe failing at STEP (fail_function) unwinds what the steps before
    it set up: no kernel report, the device's interrupts left off and its
    line quiet, and the next probe binds."""
    def check():
        bdf = pvdc_bdf(vm)
        loaded(vm)
        vm.check(f"echo {bdf} > /sys/bus/pci/drivers/pvdc/unbind", 60)
        fail_next_call(vm, step)
        try:
            vm.run(f"echo {bdf} > /sys/bus/pci/drivers/pvdc/bind", 120)
        finally:
            fail_no_more(vm, step)
        log = vm.dmesg()
        if vm.run("[ -e /dev/dri/card0 ]")[0] == 0 or \
                f"failed with error -{errno.ENOMEM}" not in log:
            raise AssertionError(f"probe did not fail at {step}:\n" +
                                 log[-3000:])
        enabled = int_enable(vm)
        if enabled:
            raise AssertionError(f"INT_ENABLE {enabled:#x} after probe "
                                 f"failed at {step}")
        if re.search(r"nobody cared|Disabling IRQ", log) or \
                driver_reports(log):
            raise AssertionError(log[-4000:])
        vm.check(f"echo {bdf} > /sys/bus/pci/drivers/pvdc/bind", 120)
        if not vm.poll("[ -e /dev/dri/card0 ]", 30):
            raise AssertionError("no card0 after a probe that works:\n" +
                                 vm.dmesg()[-3000:])
        with vm.holding("pvdc-modeset 0", r"^# holding"):
            pass
    tap.case(f"probe failing at {step} leaves the interrupts off, and the "
             "next probe binds", check)


def resume_fails(tap, vm):
    """The device failing to resume (its sanitize step, fail_function)
    leaves it quiesced, interrupts off, and the state saved at suspend
    committed without it (resume's blocking commit completes at once):
    the next suspend saves that state again, and its resume shows every
    head's pixels as before."""
    def check():
        loaded(vm)
        with vm.holding("pvdc-modeset 0", r"^# holding"):
            before = [vm.screen(h) for h in range(HEADS)]
            fail_next_call(vm, "pvdc_sanitize")
            try:
                vm.suspend_to_ram()
            finally:
                fail_no_more(vm, "pvdc_sanitize")
            if "the device did not resume" not in vm.dmesg():
                raise AssertionError("resume did not fail:\n" +
                                     vm.dmesg()[-3000:])
            enabled = int_enable(vm)
            if enabled or driver_reports(vm.dmesg()):
                raise AssertionError(f"INT_ENABLE {enabled:#x} after a "
                                     "failed resume:\n" +
                                     vm.dmesg()[-4000:])
            vm.suspend_to_ram()

            def same():
                after = [vm.screen(h) for h in range(HEADS)]
                if all(a.data == b.data for a, b in zip(after, before)):
                    return True
                raise AssertionError("a head shows other pixels than "
                                     "before the failed resume")
            vm.wait_until("every head shows its pixels again", same)
    tap.case("a resume that fails leaves the device quiesced and its "
             "state committed; the next resume shows every head again",
             check)


def no_leak(tap, vm):
    """kmemleak finds nothing of the driver's or DRM's after the failed
    probes and resume."""
    def check():
        vm.assert_no_leaks(LEAK_CODE, 300)
    tap.case("kmemleak finds no leak of the driver or DRM after the "
             "failed probes and resume", check)


def second_boot(tap):
    """A boot of its own, for a second suspend to RAM (a second one in a
    boot never reaches S3 in this guest: no SUSPEND event) and for the
    driver's failure paths through fail_function (the debug kernel's),
    each where the driver marked it, whose first injection turns lockdep
    off (driver_reports()): the first boot's cases keep it."""
    vm = GuestVM(devices=["-device", DEVICE],
                 extra_args=["-global", "ICH9-LPC.disable_s3=0"],
                 append="iomem=relaxed pci=nomsi tsc=reliable "
                        "clocksource=tsc")
    names = [f"probe failing at {step} leaves the interrupts off, and the "
             "next probe binds" for step in PROBE_STEPS]
    names.append("a resume that fails leaves the device quiesced and its "
                 "state committed; the next resume shows every head again")

    def log_clean():
        reports = driver_reports(vm.dmesg())
        if reports:
            raise AssertionError("\n".join(f"{k}: {l}"
                                           for k, l in reports[:20]))

    def body():
        s3 = "mem" in vm.run("cat /sys/power/state")[1].split()
        if s3:
            hotplug_while_asleep(tap, vm)
        else:
            tap.skip("a head's size changed while asleep is a hotplug "
                     "uevent after resume", f"the {vm.kernel.name} kernel "
                     "has no suspend to RAM")
        if vm.run(f"[ -d {FAIL_FUNCTION} ]")[0]:
            for name in names:
                tap.skip(name, f"the {vm.kernel.name} kernel has no "
                         "fail_function")
            return
        for step in PROBE_STEPS:
            probe_fails_at(tap, vm, step)
        # After the failed resume, it needs a second S3 in this boot.
        tap.skip(names[-1], "a second suspend to RAM in one boot never "
                 "reaches S3" if s3 else f"the {vm.kernel.name} kernel has "
                 "no suspend to RAM")
        if vm.run("[ -e /sys/kernel/debug/kmemleak ]")[0] == 0:
            no_leak(tap, vm)
        tap.case("the kernel log has no report but fail_function's own "
                 "(injected failures)", log_clean)
    guest_cases(tap, vm, body, "the guest boots a second time")


def latch_timeout_s():
    """How long the driver waits for a latch before it gives up
    (PVDC_LATCH_TIMEOUT_MS in the driver's header)."""
    with open(os.path.join(ROOT, "guest-driver/pvdc_drv.h")) as f:
        m = re.search(r"#define PVDC_LATCH_TIMEOUT_MS\s+"
                      r"\(PVDC_MAX_LINK_UP_DELAY_MS \+ (\d+) \* "
                      r"MSEC_PER_SEC\)", f.read())
    link_up_ms = register_constants()["PVDC_MAX_LINK_UP_DELAY_MS"]
    return link_up_ms / 1000 + int(m.group(1))


def stalled_commit(vm):
    """pvdc-stall blocked in a blocking commit on a stalled device: it
    turned a head on, the device was stalled, and it rang the commit that
    turns the head off.  Another process holds the card open, so that
    pvdc-stall closing it is not the last close, which gives the console
    its heads back with a commit of its own (and waits for the stalled
    one).  Returns both logs; the device stays stalled."""
    loaded(vm)
    log = vm.start_background("pvdc-stall -w", r"^# ready")
    holder = vm.start_background("sleep 100000 3<>/dev/dri/card0")
    vm.qom_set("x-stall", True)
    vm.check(f"kill -USR1 $(cat {log}.pid)")
    vm.wait_for_output(log, r"^# committing")
    return log, holder


def release_stall(vm, holder):
    """The device latches again; the card's holder (stalled_commit) ends."""
    vm.qom_set("x-stall", False)
    vm.stop_background(holder)


def assert_commits_after_stall(vm):
    """Raise AssertionError unless a commit applies now (pvdc-stall)."""
    out = vm.check("pvdc-stall")
    if not re.search(r"^commit 0 after", out, re.M):
        raise AssertionError(f"no commit after the stall ended:\n{out}")


def stalled_commit_is_killable(tap, vm):
    """SIGKILL ends a process blocked in a commit that the device never
    latches (x-stall); once the device latches again, so does the driver."""
    def check():
        log, holder = stalled_commit(vm)
        pid = f"$(cat {log}.pid)"
        try:
            # In the kernel, in the commit: asleep (D), not running.
            if not vm.poll(f"grep -q '^[0-9]* ([^)]*) D ' /proc/{pid}/stat",
                           30):
                raise AssertionError("pvdc-stall never blocked:\n" +
                                     vm.run(f"cat {log}")[1])
            vm.check(f"kill -KILL {pid}")
            # Well inside the driver's own bound: the kill ended it.
            gone = vm.poll(f"! kill -0 {pid} 2>/dev/null",
                           latch_timeout_s() / 2)
        finally:
            release_stall(vm, holder)
        if not gone:
            raise AssertionError("SIGKILL did not end a process blocked in "
                                 "a commit on a stalled device")
        out = vm.run(f"cat {log}")[1]
        if "commit " in out.replace("# committing", ""):
            raise AssertionError(f"the commit returned before the kill:\n"
                                 f"{out}")
        assert_commits_after_stall(vm)
    tap.case("a process blocked in a commit on a stalled device dies of "
             "SIGKILL, and commits work again once the device latches",
             check)


def stalled_commit_times_out(tap, vm):
    """A blocking commit on a device that latches nothing (x-stall) returns
    ETIMEDOUT once the driver's bound has passed, not before and not much
    after; the commit itself is applied when the device latches again."""
    def check():
        bound = latch_timeout_s()
        log, holder = stalled_commit(vm)
        applied = vm.qom_get("x-commits-applied")
        try:
            try:
                out = vm.wait_for_output(log, r"^commit ", bound * 2)
            finally:
                release_stall(vm, holder)
            m = re.search(r"^commit (-?\d+) after ([0-9.]+) s", out, re.M)
            print(f"# {m.group(0) if m else out}")
            if not m or int(m.group(1)) != -errno.ETIMEDOUT:
                raise AssertionError(f"expected -ETIMEDOUT:\n{out}")
            waited = float(m.group(2))
            if not bound <= waited <= bound * 1.5:
                raise AssertionError(f"gave up after {waited} s, the "
                                     f"driver's bound is {bound} s")
            # pvdc-stall holds the device: only its commit can latch now.
            vm.wait_until("the stalled commit is applied",
                          lambda: vm.qom_get("x-commits-applied") > applied)
        finally:
            vm.stop_background(log)
        assert_commits_after_stall(vm)
    tap.case("a blocking commit on a stalled device fails with ETIMEDOUT "
             "at the driver's bound, and is applied once the device latches",
             check)


def suspend_resume(tap, vm):
    """S3 through the guest's /sys/power/state, woken by QMP: every head
    shows the same pixels after as before."""
    def check():
        loaded(vm)
        with vm.holding("pvdc-modeset 0", r"^# holding"):
            vm.suspend_keeps_pictures(range(HEADS))
    tap.case("suspend to RAM and resume restore every head's pixels", check)


def hotplug_while_asleep(tap, vm):
    """A head's preferred size changes while the guest sleeps in S3: the
    device's hotplug interrupt is lost with its state at wake-up, and the
    driver's resume reports the change (a hotplug uevent with the new
    size) all the same."""
    def check():
        loaded(vm)
        log = vm.start_background("pvdc-hotplug 120", r"^# ready")
        result = {}
        sleeper = threading.Thread(target=lambda: result.update(
            out=vm.run("echo mem > /sys/power/state", 120)))
        sleeper.start()
        try:
            try:
                vm.wait_event("SUSPEND", 60)
            except GuestError as e:
                sleeper.join(120)
                raise AssertionError(f"{e}: {result}") from None
            vm.qom_set("head1-xres", 800)
            vm.cmd("system_wakeup")
            vm.wait_event("WAKEUP", 60)
        finally:
            sleeper.join(120)
        try:
            out = vm.wait_for_output(log, r"^connector [0-9]+ 1: ", 60)
        finally:
            vm.stop_background(log)
            vm.qom_set("head1-xres", 1024)
        if result.get("out", (1,))[0] != 0:
            raise AssertionError(f"suspend: {result}")
        m = re.search(r"^connector \d+ 1: (\d+)x", out, re.M)
        if "ok hotplug-uevent" not in out or int(m.group(1)) != 800:
            raise AssertionError(out)
    tap.case("a head's size changed while asleep is a hotplug uevent after "
             "resume", check)


def vblank_read_errors(reads, heads):
    """Where READS, the driver's register reads, break the spec's way of
    reading a head's vblank (docs/specs/pvdc.rst, VBLANK_TIME): VBLANK_COUNT,
    VBLANK_TIME_LO, _HI, VBLANK_COUNT again, and LO, HI and the count again
    as long as the count moved.  Another reader's LO read between one
    reader's LO and HI latches HI again, so only the count read after HI
    says whether LO and HI belong to one vblank; the qtest
    /pvdc/vblank/time-never-tears-between-two-readers shows that this way
    survives any order of two readers.  The driver reads a triple with
    interrupts off: a vCPU's reads of one triple follow each other with no
    other read of the device between them.  Returns (errors, triples read,
    how many of them read again because the count moved)."""
    regs = register_constants()
    names = {}
    for h in range(heads):
        base = regs["PVDC_HEAD_CONTROL_BASE"] + h * regs["PVDC_HEAD_STRIDE"]
        for reg, name in (("PVDC_HEAD_VBLANK_COUNT", "COUNT"),
                          ("PVDC_HEAD_VBLANK_TIME_LO", "LO"),
                          ("PVDC_HEAD_VBLANK_TIME_HI", "HI")):
            names[base + regs[reg]] = (h, name)
    # Per vCPU: the triple it is in the middle of, as (head, the read it
    # must make next, the count it read last), or None.
    inside = {}
    errors, triples, again = [], 0, 0
    for i, (cpu, addr, value, _) in enumerate(reads):
        head, name = names.get(addr, (None, None))
        where = f"read {i} (vCPU {cpu}, offset {addr:#x}, value {value:#x})"
        expect = inside.pop(cpu, None)
        if expect and expect[1] == "LO?":
            # The count was read alone (CRC capture does), unless LO
            # follows at once.
            expect = (expect[0], "LO", expect[2]) \
                if (head, name) == (expect[0], "LO") else None
        if expect:
            if (head, name) != expect[:2]:
                errors.append(f"{where}: expected {expect[1]} of head "
                              f"{expect[0]}")
            elif name == "LO":
                inside[cpu] = (head, "HI", expect[2])
            elif name == "HI":
                inside[cpu] = (head, "COUNT", expect[2])
            elif value == expect[2]:
                triples += 1
            else:
                again += 1
                inside[cpu] = (head, "LO", value)
        elif name == "COUNT":
            inside[cpu] = (head, "LO?", value)
        elif name is not None:
            errors.append(f"{where}: {name} of head {head} without "
                          "VBLANK_COUNT before it")
    return errors, triples, again


def fast_enables(tap, vm):
    """The device's shortest frame enabled and disabled until a vblank
    comes while the interrupt handler reads the vblank time of an enable
    (the next vblanks come every 100 us: a few enables on a quiet host)."""
    def check():
        loaded(vm)
        out = vm.check("pvdc-vblank -n 500 fast-enables", 600)
        if "not ok" in out:
            raise AssertionError(out)
        print("\n".join(l for l in out.splitlines() if "re-reads" in l))
    tap.case("a vblank meets the driver's read of an enable's vblank time",
             check)


def vblank_reads_never_tear(tap, vm, body):
    """Run BODY with QEMU tracing the driver's reads: every read of a
    vblank time, at probe and resume (process context) and when an enable
    or disable latches (the interrupt handler), follows the spec's way, and
    the count moved inside some of them (fast_enables), so that the driver
    had to read again."""
    trace = MmioReads(vm, "pvdc.mmio", "pvdc0", 0)
    trace.start()
    body()

    def check():
        errors, triples, again = vblank_read_errors(trace.stop(), HEADS)
        print(f"# {triples} reads of VBLANK_COUNT and VBLANK_TIME, {again} "
              "read again")
        if errors or not again:
            raise AssertionError("\n".join(errors[:20]) or
                                 f"the count never moved inside one of "
                                 f"{triples} reads")
    tap.case("the driver reads every vblank time with the count before "
             "and after it, and again while the count moves", check)


def cases(tap, vm):
    probe_sanitizes(tap, vm)
    fast_enables(tap, vm)
    unbind_with_flips_in_flight(tap, vm)
    if "mem" in vm.run("cat /sys/power/state")[1].split():
        suspend_resume(tap, vm)
    else:
        tap.skip("suspend to RAM and resume restore every head's pixels",
                 f"the {vm.kernel.name} kernel has no suspend to RAM")
    stalled_commit_is_killable(tap, vm)
    stalled_commit_times_out(tap, vm)
    # Last: it leaves the one warning the kernel log may have.
    refused_commit_resyncs(tap, vm)


def hotplug_cases(tap, vm, boots, named_checks):
    """Boot VM (a guest with pvdc behind a root port) and run its cases,
    (name, check) pairs, or skip the first where the guest's kernel has
    no PCI hotplug (the debug kernel)."""
    def body():
        if vm.run("ls /sys/bus/pci/slots | grep -q .")[0]:
            tap.skip(named_checks[0][0], f"the {vm.kernel.name} kernel has "
                     "no PCI hotplug")
            return
        for name, check in named_checks:
            tap.case(name, check)
    guest_cases(tap, vm, body, boots)


def unplugged_during_commit(tap):
    """A second boot, the device behind a PCIe root port: QMP device_del
    while a blocking commit waits for a device that latches nothing
    (x-stall) and a hotplug of the device's is to be reported.  The
    driver's remove completes the commit without the device, well within
    the driver's bound, before it unplugs the DRM device; the guest ejects
    the device, and the kernel reports nothing."""
    vm = GuestVM(devices=["-device", "pcie-root-port,id=rp0,bus=pcie.0,"
                          "chassis=1", "-device", f"{DEVICE},bus=rp0"],
                 append="iomem=relaxed pci=nomsi")
    name = ("QMP device_del during a blocking commit on a stalled device "
            "completes the commit at once and ejects the device")

    def check():
        log, holder = stalled_commit(vm)
        # A hotplug interrupt: hotplug_work is scheduled behind it.
        vm.qom_set("head1-xres", 800)
        vm.cmd("device_del", id="pvdc0")
        out = vm.wait_for_output(log, r"^commit ", latch_timeout_s() * 2)
        vm.wait_event("DEVICE_DELETED", 60 * vm.slowdown)
        vm.stop_background(holder)
        vm.stop_background(log)
        m = re.search(r"^commit (-?\d+) after ([0-9.]+) s", out, re.M)
        print(f"# {m.group(0) if m else out}")
        if not m or int(m.group(1)) or \
                float(m.group(2)) >= latch_timeout_s() / 2:
            raise AssertionError(f"the commit did not complete at the "
                                 f"unplug:\n{out}")
        if vm.run("[ -e /dev/dri/card0 ]")[0] == 0:
            raise AssertionError("card0 is still there")

    hotplug_cases(tap, vm, "guest boots with pvdc behind a root port",
                  [(name, check),
                   (KERNEL_LOG_CASE + " (unplugged)", vm.check_kernel_log)])


# The link-up delay of the device unplugged while the driver resynchronizes
# a head: the resynchronizing modeset waits that long for its enable, far
# longer than the host needs to stall the device behind it.
RESYNC_LINK_UP_MS = 5000
TRACING = "/sys/kernel/debug/tracing"
# Entering the unplug, and the return of each work the interrupt handler
# schedules (kprobe_events; a group of their own).
UNPLUG_PROBES = ("p:pvdc_unplug/unplug drm_dev_unplug",
                 "r:pvdc_unplug/resync_done pvdc:pvdc_resync_work",
                 "r:pvdc_unplug/hotplug_done pvdc:pvdc_hotplug_work")


def unplugged_while_resynchronizing(tap):
    """A boot of its own, the device behind a PCIe root port and taking
    RESYNC_LINK_UP_MS to bring a head up: a commit the device refuses (a
    shadow register written behind the driver) has the driver's
    resync_work modeset the head, and the host stalls the device (x-stall)
    before that enable latches, so that the work is still committing when
    QMP device_del comes, with a hotplug of the device's behind it.
    Removal completes the commit without the device, and neither work
    returns once the DRM device is being unplugged (kprobes on both and on
    drm_dev_unplug()): none commits to an unplugged device.  With the
    works cancelled after drm_dev_unplug(), resync_work returned after
    it.  The guest ejects the device, and the kernel reports only the
    refusal."""
    vm = GuestVM(devices=["-device", "pcie-root-port,id=rp0,bus=pcie.0,"
                          "chassis=1", "-device",
                          f"{DEVICE},bus=rp0,"
                          f"x-link-up-delay-ms={RESYNC_LINK_UP_MS}"],
                 append="iomem=relaxed pci=nomsi")
    name = ("QMP device_del while resync_work commits to a stalled device, "
            "a hotplug reported behind it: no work returns once the unplug "
            "began, and the device is ejected")

    def check():
        log = flipping(vm, 1, 600)
        for probe in UNPLUG_PROBES:
            vm.check(f"echo '{probe}' >> {TRACING}/kprobe_events")
        vm.check(f"echo > {TRACING}/trace && "
                 f"echo 1 > {TRACING}/events/pvdc_unplug/enable")
        before = vm.qom_get("x-commits-rejected")
        vm.check(f"pvdc-poke write {PRIMARY0_CTRL:#x} "
                 f"{RESERVED_BIT | 1:#x}")
        vm.wait_until("the device refuses a flip",
                      lambda: vm.qom_get("x-commits-rejected") > before)
        vm.qom_set("x-stall", True)
        if not vm.poll("grep -qs 'pvdc_resync_work+' "
                       "/proc/[0-9]*/stack", 30):
            raise AssertionError("resync_work is not running: its enable "
                                 "latched before the device stalled")
        # A hotplug interrupt: hotplug_work is scheduled behind it.
        vm.qom_set("head1-xres", 800)
        vm.cmd("device_del", id="pvdc0")
        vm.wait_event("DEVICE_DELETED", 60 * vm.slowdown)
        vm.stop_background(log)
        trace = vm.check(f"cat {TRACING}/trace")
        events = re.findall(r"\s(unplug|resync_done|hotplug_done): \(",
                            trace)
        print("# in order: " + " ".join(events))
        if "unplug" not in events or "resync_done" not in events:
            raise AssertionError(f"no unplug, or resync_work never "
                                 f"returned:\n{trace[-3000:]}")
        late = events[events.index("unplug") + 1:]
        if late or events.index("resync_done") > events.index("unplug"):
            raise AssertionError(f"works ran after the unplug began: "
                                 f"{' '.join(events)}")
        if vm.run("[ -e /dev/dri/card0 ]")[0] == 0:
            raise AssertionError("card0 is still there")

    def log_has_only_the_refusal():
        log = vm.dmesg()
        reports = kernel_log_reports(log)
        others = [r for r in reports if r[0] != "WARN"]
        if others or len(reports) > 1 or "refused commit" not in log:
            raise AssertionError("\n".join(f"{k}: {l}"
                                           for k, l in reports[:20]) or
                                 "no refused commit in the kernel log")

    hotplug_cases(tap, vm, "guest boots with a slow link behind a root port",
                  [(name, check),
                   ("the kernel log reports the refused commit and nothing "
                    "else (unplugged while resynchronizing)",
                    log_has_only_the_refusal)])


def body(tap, vm):
    vblank_reads_never_tear(tap, vm, lambda: cases(tap, vm))
    second_boot(tap)
    unplugged_during_commit(tap)
    unplugged_while_resynchronizing(tap)


if __name__ == "__main__":
    sys.exit(run_suite(body, device=DEVICE, append="iomem=relaxed pci=nomsi",
                       s3=True))
