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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pvdc_harness import (GuestError, MmioReads,  # noqa: E402
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
    vm.check("[ -e /dev/dri/card0 ] || insmod /lib/modules/pvdc.ko")
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


def body(tap, vm):
    vblank_reads_never_tear(tap, vm, lambda: cases(tap, vm))


if __name__ == "__main__":
    sys.exit(run_suite(body, device=DEVICE, append="iomem=relaxed pci=nomsi",
                       s3=True))
