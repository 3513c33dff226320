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
from pvdc_harness import (KERNEL_LOG_CASE, never_rejected,  # noqa: E402
                          run_suite)
from test_kms import program_cases  # noqa: E402

DEVICE = "pvdc,id=pvdc0,heads=2"


def planes(tap, vm):
    never_rejected(tap, vm, "the device refuses none of the YCbCr and "
                   "upscaled planes the driver accepted",
                   lambda: program_cases(tap, vm, "pvdc-planes",
                                         "pvdc-planes", 300))


def main():
    def body(tap, vm):
        planes(tap, vm)
        tap.case(KERNEL_LOG_CASE, vm.check_kernel_log)
    return run_suite(body, device=DEVICE, append="iomem=relaxed")


if __name__ == "__main__":
    sys.exit(main())
