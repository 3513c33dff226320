#!/usr/bin/python3
"""Explicit fences end to end, in one boot on a two-head pvdc.

guest-driver/tests/pvdc-fence checks IN_FENCE_FD and OUT_FENCE_PTR against
the device's registers (when a flip is armed, latched and scanned out);
each of its result lines is a case here.  While head 0 waits for a fence
that is never signalled, the host reads both heads back with screendump:
head 0 still shows the picture it had (blue), not the one of the held flip
(red).  Fences come from sw_sync, which only the debug kernel has: on
Debian's kernel the program reports its cases as skipped.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pvdc_harness import KERNEL_LOG_CASE, run_suite  # noqa: E402
from test_kms import result_cases  # noqa: E402

HEADS = 2
BLUE = 0x0000ff


def head_shows(vm, head, colour):
    pic = vm.screen(head)
    seen = {pic.xrgb(x, y) for x in range(0, pic.width, 31)
            for y in range(0, pic.height, 29)}
    if seen != {colour}:
        raise AssertionError(f"head {head} shows "
                             f"{sorted(map(hex, seen))[:8]}, not "
                             f"{colour:#08x} only")


def fences(tap, vm):
    log = vm.start_background(
        "sh -c 'pvdc-fence -w; echo \"# exit status $?\"'",
        r"^# stuck|^# exit status")
    if "# stuck" in vm.run(f"cat {log}")[1]:
        tap.case("a flip held by an unsignalled fence leaves head 0's "
                 "picture on screen", head_shows, vm, 0, BLUE)
        vm.check("kill -USR1 $(pidof pvdc-fence)")
    out = vm.wait_for_output(log, r"^# exit status")
    seen = result_cases(tap, "pvdc-fence", out)

    def exits_0():
        if seen == 0 or "# exit status 0" not in out:
            raise AssertionError(f"{seen} result lines:\n{out[-3000:]}")
    tap.case("pvdc-fence: exits 0", exits_0)


def suite(tap, vm):
    fences(tap, vm)
    tap.case(KERNEL_LOG_CASE, vm.check_kernel_log)


if __name__ == "__main__":
    sys.exit(run_suite(suite, HEADS))
