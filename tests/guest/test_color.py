#!/usr/bin/python3
"""The CRTC colour pipeline (DEGAMMA_LUT, CTM, GAMMA_LUT), in one boot of a
two-head pvdc on q35 with S3 enabled and iomem=relaxed.

guest-driver/tests/pvdc-color compares frame CRCs of a framebuffer shown
through identity and known pipelines with those of framebuffers holding
the pixels the spec's arithmetic predicts, checks that a new pipeline on
an enabled head is no modeset (its vblank timeline, read through BAR 0,
goes on unbroken), that TEST_ONLY refuses LUTs of the wrong size and that
the legacy gamma ioctl sets GAMMA_LUT; each of its result lines is a case
here.  The host checks that the device refused none of the commits the
driver accepted meanwhile (x-commits-rejected), and that a pipeline
survives suspend to RAM: the screendumps of the head before and after S3
are the same inverted picture.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pvdc_harness import (KERNEL_LOG_CASE, never_rejected,  # noqa: E402
                          run_suite)
from test_kms import program_cases  # noqa: E402

DEVICE = "pvdc,id=pvdc0,heads=2"


def pipelines(tap, vm):
    never_rejected(tap, vm, "the device refuses none of the colour "
                   "pipelines the driver accepted",
                   lambda: program_cases(tap, vm, "pvdc-color",
                                         "pvdc-color", 300))


def picture(x, y):
    """What pvdc-color's framebuffer F shows at x, y, inverted (its
    hold mode's GAMMA_LUT), as 0xRRGGBB."""
    r, g, b = x & 0xff, y & 0xff, (x * 7 + y * 13) & 0xff
    return (255 - r) << 16 | (255 - g) << 8 | (255 - b)


def shows_inverted(pic):
    for x, y in ((0, 0), (1, 2), (200, 100), (255, 255), (pic.width - 1,
                                                           pic.height - 1)):
        if pic.xrgb(x, y) != picture(x, y):
            return f"{x},{y} is {pic.xrgb(x, y):06x}, not {picture(x, y):06x}"
    return None


def suspend_resume(tap, vm):
    """S3 through /sys/power/state, woken by QMP: the head shows the same
    picture through its GAMMA_LUT after as before."""
    def check():
        with vm.holding("pvdc-color hold", r"^# holding"):
            wrong = shows_inverted(vm.screen(0))
            if wrong:
                raise AssertionError(f"before S3: {wrong}")
            vm.suspend_keeps_pictures([0])
    tap.case("suspend to RAM and resume keep the head's GAMMA_LUT", check)


def body(tap, vm):
    pipelines(tap, vm)
    name = "suspend to RAM and resume keep the head's GAMMA_LUT"
    if "mem" not in vm.run("cat /sys/power/state")[1].split():
        tap.skip(name, f"the {vm.kernel.name} kernel has no suspend to RAM")
    else:
        suspend_resume(tap, vm)
    tap.case(KERNEL_LOG_CASE, vm.check_kernel_log)


if __name__ == "__main__":
    sys.exit(run_suite(body, device=DEVICE, append="iomem=relaxed", s3=True))
