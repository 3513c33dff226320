#!/usr/bin/python3
"""Foundation: the whole pipeline in one boot.

The guest boots on pvdc, the driver binds and registers a DRM device that
user space sees as "pvdc", the host takes a screendump of every head, and
the harness kills a guest that hangs with a clear message.
"""

import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pvdc_harness import (KERNEL_LOG_CASE, GuestError,  # noqa: E402
                          run_suite)
from pvdc_paths import ROOT  # noqa: E402

HEADS = 2


def driver_binds(vm):
    out = vm.check("cat /sys/class/drm/card0/device/uevent")
    if "DRIVER=pvdc" not in out:
        raise AssertionError(f"card0 is not driven by pvdc:\n{out}")


def drm_version_names_pvdc(vm):
    out = vm.check("pvdc-version")
    if "pvdc" not in out:
        raise AssertionError(f"pvdc-version printed:\n{out}")


def screendump_every_head(vm, tmp):
    for head in range(HEADS):
        path = vm.screendump(os.path.join(tmp, f"head{head}.png"), head=head)
        with open(path, "rb") as f:
            data = f.read()
        if not data.startswith(b"\x89PNG\r\n\x1a\n") or len(data) < 64:
            raise AssertionError(f"head {head}: not a PNG ({len(data)} bytes)")


def debug_kernel_has_its_config(vm):
    """Every option of the debug kernel's config fragments is in the kernel
    the guest runs (/proc/config.gz)."""
    config = set(vm.check("zcat /proc/config.gz").splitlines())
    missing = []
    for frag in ("guest.config", "debug.config"):
        with open(os.path.join(ROOT, "guest-driver", "kernel", frag)) as f:
            for line in f:
                line = line.strip()
                if line.startswith("CONFIG_") and line not in config:
                    missing.append(line)
                elif line.startswith("# CONFIG_") and \
                        any(c.startswith(line.split()[1] + "=")
                            for c in config):
                    missing.append(line)
    if missing:
        raise AssertionError("not in /proc/config.gz: " + ", ".join(missing))


def hung_guest_is_killed(vm):
    try:
        vm.run("while :; do :; done", timeout=5)
    except GuestError as e:
        msg = str(e)
        if not msg.startswith("timeout:") or "guest killed" not in msg:
            raise AssertionError(f"unclear timeout message: {msg}")
        if vm.is_running():
            raise AssertionError("QEMU still running after the timeout")
        return
    raise AssertionError("a hung guest command returned")


def suite(tap, vm):
    tmp = tempfile.mkdtemp(prefix="pvdc-foundation-")
    tap.case("pvdc driver binds to the device", driver_binds, vm)
    tap.case("DRM_IOCTL_VERSION names the driver pvdc",
             drm_version_names_pvdc, vm)
    tap.case("screendump of every head is a PNG", screendump_every_head,
             vm, tmp)
    if vm.kernel.name == "debug":
        tap.case("the debug kernel has every option of its config "
                 "fragments", debug_kernel_has_its_config, vm)
    tap.case(KERNEL_LOG_CASE, vm.check_kernel_log)
    # Last: it kills the guest.
    tap.case("a hung guest is killed by the step timeout",
             hung_guest_is_killed, vm)


if __name__ == "__main__":
    sys.exit(run_suite(suite, HEADS))
