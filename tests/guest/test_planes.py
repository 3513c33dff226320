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

A second guest, on a four-head pvdc with the default VRAM and bandwidth,
runs guest-driver/tests/pvdc-budget: four dumb buffers of the largest mode
per head, a full-screen primary and overlay on every head, and a flip of
all of them (issue 14: what the defaults must hold).

A third guest, two vCPUs on a two-head pvdc whose bindings have room for
seven buffers of its 1024x768 preferred mode, runs
guest-driver/tests/pvdc-space: TEST_ONLY refuses with ENOSPC the flips and
the writeback target whose buffers would not fit in the device address
space beside those the device still shows, and accepts those that do,
blocking and nonblocking, and each commit ends as its TEST_ONLY said; a
TEST_ONLY that needs an eviction leaves the bindings as they were; head
1's TEST_ONLY commits never make head 0's flips fail; no reservation
outlives its commit (issue 33: a commit is refused by its check, not by
prepare_fb, and the check writes no register, which test_kms asserts).

A fourth guest, on a pvdc whose preferred mode is 7680x4320, reads the
connector's modes: Linux lists 7680x4320 from the DisplayID extension of
the EDID, which the driver reads block by block (issue 33).
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pvdc_harness import (KERNEL_LOG_CASE, GuestVM,  # noqa: E402
                          guest_cases, guest_kernel, never_rejected,
                          run_suite)
from test_kms import program_cases  # noqa: E402

# pvdc-planes' bandwidth cases fill what a head has left after its primary
# with one NV12 or P010 overlay of at most max-height (2160) lines.
DEVICE = "pvdc,id=pvdc0,heads=2,bandwidth-kib=24000"
# Every size left to the device: what its defaults give four heads.
BUDGET_DEVICE = "pvdc,id=pvdc0,heads=4"
# The largest mode the EDID lists with the default max-width/max-height.
LARGEST_MODE = "4096x2160"
# GEM shmem buffers live in guest RAM, and are scanned out of it: room for
# pvdc-budget's sixteen (540 MiB) besides what the kernel needs.
BUDGET_EXTRA_MEMORY_MIB = 1024
# Seven 3 MiB XRGB8888 buffers of 1024x768 fit above VRAM, not eight:
# pvdc-space's four shown and four flipped to.
SPACE_BUFFER_MIB = 3
SPACE_DEVICE = f"pvdc,id=pvdc0,heads=2,x-bind-space={7 * SPACE_BUFFER_MIB}M"
# A preferred mode only a DisplayID extension of the EDID describes; the
# console takes a small mode, so that the guest composes no 8K frames.
MODE_8K = "7680x4320"
EDID_8K_DEVICE = ("pvdc,id=pvdc0,heads=1,max-width=7680,max-height=4320,"
                  "xres=7680,yres=4320")
EDID_8K_APPEND = "video=Virtual-1:1024x768"


def planes(tap, vm):
    never_rejected(tap, vm, "the device refuses none of the YCbCr and "
                   "upscaled planes the driver accepted",
                   lambda: program_cases(tap, vm, "pvdc-planes",
                                         "pvdc-planes", 300))


def default_budget(tap):
    """pvdc-budget on a guest of its own, booted on BUDGET_DEVICE."""
    memory = int(guest_kernel().memory) + BUDGET_EXTRA_MEMORY_MIB
    vm = GuestVM(devices=["-device", BUDGET_DEVICE], memory=str(memory))

    def budget():
        out = program_cases(tap, vm, "pvdc-budget", "pvdc-budget", 300)

        def largest_mode():
            modes = [l.split()[-1] for l in out.splitlines()
                     if l.startswith("# head ")]
            if len(modes) != 4 or set(modes) != {LARGEST_MODE}:
                raise AssertionError(f"largest modes {modes}, not four "
                                     f"{LARGEST_MODE}:\n{out[-2000:]}")
        tap.case(f"pvdc-budget: every head's largest mode is {LARGEST_MODE}",
                 largest_mode)
        tap.case(f"{KERNEL_LOG_CASE} (four heads)", vm.check_kernel_log)
    guest_cases(tap, vm, budget,
                "a guest boots on a four-head pvdc with default sizes",
                "the four-head guest stays responsive")


def address_space(tap):
    """pvdc-space on a guest of its own, booted on SPACE_DEVICE."""
    vm = GuestVM(devices=["-device", SPACE_DEVICE], smp=2)

    def space():
        out = program_cases(tap, vm, "pvdc-space", "pvdc-space", 300)

        def buffer_size():
            size = f"# buffers of {SPACE_BUFFER_MIB << 20} bytes"
            if size not in out:
                raise AssertionError(f"not {size}:\n{out[-2000:]}")
        tap.case(f"pvdc-space: its buffers are {SPACE_BUFFER_MIB} MiB",
                 buffer_size)
        tap.case(f"{KERNEL_LOG_CASE} (little address space)",
                 vm.check_kernel_log)
    guest_cases(tap, vm, space,
                "a guest boots on a pvdc with little address space",
                "the guest with little address space stays responsive")


def edid_8k(tap):
    """The modes Linux lists for an 8K preferred mode, on EDID_8K_DEVICE."""
    vm = GuestVM(devices=["-device", EDID_8K_DEVICE], append=EDID_8K_APPEND)

    def listed():
        modes = vm.check("cat /sys/class/drm/card0-Virtual-1/modes")

        def lists_8k():
            if MODE_8K not in modes.split():
                raise AssertionError(f"no {MODE_8K} in:\n{modes}")
        tap.case(f"the connector lists {MODE_8K} from the EDID's DisplayID "
                 "block", lists_8k)
        tap.case(f"{KERNEL_LOG_CASE} (8K EDID)", vm.check_kernel_log)
    guest_cases(tap, vm, listed,
                "a guest boots on a pvdc whose preferred mode is 8K",
                "the guest with an 8K preferred mode stays responsive")


def main():
    def body(tap, vm):
        planes(tap, vm)
        tap.case(KERNEL_LOG_CASE, vm.check_kernel_log)
        vm.stop()
        default_budget(tap)
        address_space(tap)
        edid_8k(tap)
    return run_suite(body, device=DEVICE, append="iomem=relaxed")


if __name__ == "__main__":
    sys.exit(main())
