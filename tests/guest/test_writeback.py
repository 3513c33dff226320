#!/usr/bin/python3
"""Writeback connectors, in one boot of a two-head pvdc on q35 with S3
enabled and iomem=relaxed.

guest-driver/tests/pvdc-writeback checks that a client with
DRM_CLIENT_CAP_WRITEBACK_CONNECTORS sees one writeback connector per head
with the device's formats (and one without the cap none), that a commit of
WRITEBACK_FB_ID signals its out fence once the device wrote the frame the
head shows (the written pixels have the pipe CRC of that frame), through
the colour pipeline, in each format's channel order, once only, and that
TEST_ONLY refuses the targets the device would; each of its result lines
is a case here.  The host checks that the device refused none of the
commits the driver accepted meanwhile (x-commits-rejected), and that the
head's screendump is the picture written back: the guest prints the
CRC-32 of the written pixels, the host computes it from the screendump;
the head shows it again after suspend to RAM with the writeback connector
attached.
"""

import os
import re
import sys
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pvdc_harness import (KERNEL_LOG_CASE, never_rejected,  # noqa: E402
                          run_suite)
from test_kms import program_cases  # noqa: E402

DEVICE = "pvdc,id=pvdc0,heads=2"
SCREENDUMP_CASE = "the head's screendump is the picture written back"
S3_CASE = ("suspend to RAM and resume with the writeback connector attached "
           "keep the picture")


def picture_crc(pic):
    """CRC-32 of a screendump as the device's frame CRCs take a picture:
    rows top to bottom, each pixel a little-endian word 0x00RRGGBB."""
    n = pic.width * pic.height
    rgb = pic.data[:n * 3]
    words = bytearray(n * 4)
    words[0::4] = rgb[2::3]
    words[1::4] = rgb[1::3]
    words[2::4] = rgb[0::3]
    return zlib.crc32(bytes(words))


def screendump(tap, vm, s3):
    """The head's screendump is the picture the guest wrote back; with S3,
    it is again after suspend to RAM and resume with the writeback
    connector attached."""
    state = {}

    def same():
        pic = vm.screen(0)
        crc = picture_crc(pic)
        if crc != state["written"]:
            raise AssertionError(f"screendump {pic.width}x{pic.height} "
                                 f"crc32 {crc:08x}, written "
                                 f"{state['written']:08x}")
        return True

    def check():
        out = vm.run(f"cat {state['log']}")[1]
        m = re.search(r"^# written-crc32 ([0-9a-f]{8})", out, re.M)
        if not m:
            raise AssertionError(f"no written CRC:\n{out[-2000:]}")
        state["written"] = int(m.group(1), 16)
        vm.wait_until("the screendump shows the written picture", same)

    def resume():
        vm.suspend_to_ram()
        vm.wait_until("the head shows the written picture again", same)

    state["log"] = vm.start_background("pvdc-writeback hold", r"^# holding")
    try:
        tap.case(SCREENDUMP_CASE, check)
        if not s3:
            tap.skip(S3_CASE, f"the {vm.kernel.name} kernel has no suspend "
                     "to RAM")
        elif "written" not in state:
            tap.skip(S3_CASE, "no picture written back")
        else:
            tap.case(S3_CASE, resume)
    finally:
        out = vm.stop_background(state["log"])

    def no_failure():
        if "not ok" in out:
            raise AssertionError(out)
    tap.case("pvdc-writeback hold reports no failure", no_failure)


def body(tap, vm):
    name = ("the device refuses none of the writeback commits the driver "
            "accepted")
    never_rejected(tap, vm, name,
                   lambda: program_cases(tap, vm, "pvdc-writeback",
                                         "pvdc-writeback", 300))
    screendump(tap, vm, "mem" in vm.run("cat /sys/power/state")[1].split())
    tap.case(KERNEL_LOG_CASE, vm.check_kernel_log)


if __name__ == "__main__":
    sys.exit(run_suite(body, device=DEVICE, append="iomem=relaxed", s3=True))
