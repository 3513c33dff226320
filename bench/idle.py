#!/usr/bin/python3
"""Idle cost of a display device: host CPU time of the QEMU process while
the guest sits at a static console, for pvdc and its peers, as ratios
against the same VM with no display device, measured in the same run.
"""

import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))), "tests", "guest"))
from pvdc_harness import GuestVM  # noqa: E402

CLK_TCK = os.sysconf("SC_CLK_TCK")

# (name, QEMU device options, guest module to load; None: none)
DEVICES = [
    ("none", [], None),
    ("pvdc", ["-device", "pvdc,id=pvdc0"], "pvdc"),
    ("bochs-display", ["-device", "bochs-display"], "bochs"),
    ("virtio-gpu-pci", ["-device", "virtio-gpu-pci"], "virtio-gpu"),
]


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def load_driver(vm, module):
    if module in (None, "pvdc"):
        return
    # Dependencies first, in the order the image builder wrote them.
    vm.run("for m in $(cat /etc/pvdc/extra-modules.order); do "
           "insmod /lib/modules/$m 2>/dev/null; done")


def measure(devices, module, interval, settle):
    append = "" if module == "pvdc" else "pvdc.noload"
    with GuestVM(devices=devices, append=append) as vm:
        load_driver(vm, module)
        time.sleep(settle)          # let the console draw and the guest settle
        before_cb = None
        if module == "pvdc":
            before_cb = vm.qom_get("timer-callbacks")
        t0 = cpu_seconds(vm.proc.pid)
        w0 = time.monotonic()
        time.sleep(interval)
        cpu = cpu_seconds(vm.proc.pid) - t0
        wall = time.monotonic() - w0
        callbacks = None
        if before_cb is not None:
            callbacks = vm.qom_get("timer-callbacks") - before_cb
        return cpu / wall, callbacks


def run(repeats=3, interval=10.0, settle=3.0):
    rows = {}
    for name, devices, module in DEVICES:
        samples, cbs = [], []
        for _ in range(repeats):
            load, cb = measure(devices, module, interval, settle)
            samples.append(load)
            if cb is not None:
                cbs.append(cb)
        rows[name] = {"cpu_load": samples, "timer_callbacks": cbs}
    base = statistics.median(rows["none"]["cpu_load"])
    for name, row in rows.items():
        ratios = [s / base for s in row["cpu_load"]]
        row["ratio"] = statistics.median(ratios)
        row["spread"] = max(ratios) - min(ratios)
    return rows


if __name__ == "__main__":
    import json
    print(json.dumps(run(repeats=1, interval=5), indent=2))
