#!/usr/bin/python3
"""What planes show, in one boot on a two-head pvdc with iomem=relaxed.

guest-driver/tests/pvdc-planes compares frame CRCs of NV12, P010 and YUYV
overlays, for each COLOR_ENCODING and COLOR_RANGE, with those of XRGB8888
framebuffers holding the conversion the spec defines, shows a 20x20
framebuffer scaled to the whole mode on the primary plane and on an
overlay, and checks that the framebuffers the device would refuse are
refused by ADDFB2 or a TEST_ONLY commit without a register write (it reads
the device's shadow registers through BAR 0); each of its result lines is
a case here.  The host checks that the device refused none of the commits
the driver accepted meanwhile (x-commits-rejected).
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pvdc_harness import (KERNEL_LOG_CASE, GuestError,  # noqa: E402
                          GuestVM, Tap)
from test_kms import program_cases  # noqa: E402

DEVICE = "pvdc,id=pvdc0,heads=2"


def planes(tap, vm):
    before = vm.qom_get("x-commits-rejected")
    applied = vm.qom_get("x-commits-applied")
    program_cases(tap, vm, "pvdc-planes", "pvdc-planes", 300)

    def never_rejected():
        rejected = vm.qom_get("x-commits-rejected") - before
        done = vm.qom_get("x-commits-applied") - applied
        print(f"# device: {done} head commits applied, {rejected} rejected")
        if rejected or not done:
            raise AssertionError(f"{done} applied, {rejected} rejected")
    tap.case("the device refuses none of the YCbCr and upscaled planes the "
             "driver accepted", never_rejected)


def main():
    tap = Tap()
    vm = GuestVM(devices=["-device", DEVICE], append="iomem=relaxed")
    try:
        vm.start()
    except GuestError as e:
        tap.fail("guest boots on pvdc", e)
        return tap.done()
    try:
        planes(tap, vm)
        tap.case(KERNEL_LOG_CASE, vm.check_kernel_log)
    except GuestError as e:
        tap.fail("the guest stays responsive", e)
    finally:
        vm.stop()
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
