#!/usr/bin/python3
"""Commits complete when the device says so, heads never wait for each
other, cursors never wait, vblanks are exact.  One boot of a two-head pvdc
with a pool of one scaler and a link-up delay of 2.5 s: far longer than
anything the driver could wait for by a clock.  Then a boot with two
vCPUs whose flip events are checked with the host's CPUs taken: an
interrupt handler runs beside the process that rings the next flip, and a
host that deschedules one vCPU stops the handler there while the device
goes on latching.  Then a boot whose
clock counts the guest's instructions (GuestVM(stall_free=True)), for
flips that must land on the next vblank while other processes hammer the
other head's cursor, a thread moves the flipping head's own cursor or the
other head modesets, or to buffers never shown before: there, a host
that deschedules QEMU does not make frames the guest missed.  That guest
has two vCPUs: the storms run beside the flips, not only between them.

In-guest programs (guest-driver/tests) do the work and report "ok NAME" /
"not ok NAME: why" lines; the host checks what the device says about it
(x-commits-rejected, through QMP) and loads the host's CPUs while vblank
intervals are measured.
"""

import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pvdc_harness import (KERNEL_LOG_CASE, GuestVM, Tap,  # noqa: E402
                          guest_cases, never_rejected)
from test_kms import HEAD_KIB, program_cases  # noqa: E402

LINK_UP_MS = 2500
# pvdc-cursor's legacy case fills a head's allocation with two 4096x1024
# overlays: it needs an allocation smaller than both (the default is
# larger).
DEVICE = (f"pvdc,id=pvdc0,heads=2,scalers=1,bandwidth-kib={2 * HEAD_KIB},"
          f"x-link-up-delay-ms={LINK_UP_MS}")


class HostLoad:
    """One busy process per host CPU for as long as it is held."""

    def __enter__(self):
        self.procs = [subprocess.Popen([sys.executable, "-c",
                                        "while True: pass"])
                      for _ in range(os.cpu_count() or 2)]
        return self

    def __exit__(self, *exc):
        for p in self.procs:
            p.kill()
            p.wait()


# pvdc-flips: FLIPS page flips per case.
FLIPS = 200


def flips_without_host_stalls(tap):
    """Head 0's flips against cursor storms on head 1 (legacy ioctls and
    atomic commits), against children that only take CPU time, and to
    fresh buffers; every verdict from the vblank sequence numbers.  Then
    the main guest's pacing cases again, on two vCPUs: head 0's flips
    while a thread moves its own cursor, and while head 1 modesets and
    switches a scaled overlay.  On a loaded host without a stall-free
    clock, a vCPU descheduled in the middle of one of them delays the
    other vCPU's flips too (guest-commit-debug at load 10: 7 to 11 late
    flips in each), which says nothing about the driver; here it does."""
    vm = GuestVM(devices=["-device", "pvdc,id=pvdc0,heads=2"], smp=2,
                 stall_free=True)

    def storms():
        program_cases(tap, vm, "pvdc-flips",
                      f"pvdc-flips -n {FLIPS} -c 2 storm-legacy "
                      "storm-atomic storm-spin fresh", 900)
        program_cases(tap, vm, "pvdc-cursor, two vCPUs",
                      "pvdc-cursor -t 5 moves", 300)
        program_cases(tap, vm, "pvdc-heads, two vCPUs",
                      "pvdc-heads -t 8 modesets overlays", 300)
        tap.case(f"{KERNEL_LOG_CASE} (storms)", vm.check_kernel_log)
    guest_cases(tap, vm, storms,
                "guest boots with its clock counting instructions",
                "the guest stays responsive during the storms")


def flip_events_on_a_loaded_host(tap):
    """Flip events of a two-vCPU guest while other processes take the
    host's CPUs; every verdict from the device's frame numbers."""
    vm = GuestVM(devices=["-device", DEVICE], append="iomem=relaxed", smp=2)

    def flips():
        # Late interrupt handlers, some stopped after they read what the
        # device raised: events keep their latch frame.
        with HostLoad():
            program_cases(tap, vm, "pvdc-vblank flips, host loaded",
                          "pvdc-vblank -n 2000 flips", 300)
        tap.case(f"{KERNEL_LOG_CASE} (host loaded)", vm.check_kernel_log)
    guest_cases(tap, vm, flips, "guest boots with two vCPUs",
                "the guest stays responsive on a loaded host")


def main():
    tap = Tap()
    vm = GuestVM(devices=["-device", DEVICE], append="iomem=relaxed")

    def cases():
        # Exactly periodic, with the host's CPUs taken by others.
        with HostLoad():
            program_cases(tap, vm, "pvdc-vblank intervals, host loaded",
                          "pvdc-vblank -n 300 intervals", 300)
        # Flips rung at any phase: the latch vblank in doubt, read back.
        program_cases(tap, vm, "pvdc-vblank flips at any phase",
                      "pvdc-vblank -n 2000 flips-anytime", 300)
        program_cases(tap, vm, "pvdc-vblank",
                      f"pvdc-vblank -l {LINK_UP_MS} waits passed enable "
                      "modeset-cursor modes", 300)
        program_cases(tap, vm, "pvdc-cursor",
                      "pvdc-cursor -t 5 moves pinned legacy", 300)
        never_rejected(tap, vm, "head 1's modesets and overlays: the device "
                       "refuses nothing",
                       lambda: program_cases(tap, vm, "pvdc-heads",
                                             "pvdc-heads -t 8 modesets "
                                             "overlays", 300))
        never_rejected(tap, vm, "the single scaler moves between heads: the "
                       "device refuses nothing",
                       lambda: program_cases(tap, vm, "pvdc-heads",
                                             "pvdc-heads -t 8 scaler-moves",
                                             300))
        never_rejected(tap, vm, "an overlay goes to head 0 while head 1, "
                       "which it leaves, flips: the device refuses nothing",
                       lambda: program_cases(tap, vm, "pvdc-heads",
                                             "pvdc-heads -t 6 plane-moves",
                                             300))

        def no_kernel_warnings():
            bad = [line for line in vm.dmesg().splitlines()
                   if "WARNING:" in line or "BUG:" in line or
                   "refused commit" in line or "timed out" in line]
            if bad:
                raise AssertionError("\n".join(bad[:20]))
        tap.case("no warning, refusal or timeout in the kernel log",
                 no_kernel_warnings)
    guest_cases(tap, vm, cases)
    flip_events_on_a_loaded_host(tap)
    flips_without_host_stalls(tap)
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
