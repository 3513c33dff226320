#!/usr/bin/python3
"""pvdc benchmarks, side by side with bochs-display and virtio-gpu.

    ./bench/run.py [--quick] [--only SECTION,...] [--repeats N]
                   [--accel kvm|tcg] [-o build/bench/results.json]

Prints one table and writes the same figures as JSON.  Every figure is a
ratio against a baseline measured in the same run (a memcpy of a frame, a
full recomposition, the same VM without a display device, the refresh
rate, bochs-display, a trivial ioctl), with its spread over the repeats;
rows that miss their target are marked MISS.  Sections:

  composition  host time to compose a 1920x1080 frame per scene / memcpy
               (one scene also from scattered guest pages, as the device
               composes a binding that is not contiguous in the host, and
               from a memfd host view of them, with the bytes each copies
               per frame);
               upscaling / a 2x upscale to the same destination, an identity
               colour pipeline / none
  damage       recomposing a 64x64 damaged rectangle / the full frame
  idle         host CPU of QEMU with an idle guest at a static console,
               pvdc / bochs-display / virtio-gpu-pci vs no display device;
               pvdc's timer callbacks meanwhile
  flips        nonblocking page flips per second per head / refresh rate,
               missed frames; one head, then four heads from four threads
  flipcost     MMIO accesses (and virtqueue kicks, device callbacks) per
               primary-plane page flip (runs of 2N and N flips, difference
               over N): pvdc vs bochs-display vs virtio-gpu; pvdc's per
               legacy cursor move, the same way
  check        one atomic TEST_ONLY commit / one DRM_IOCTL_VERSION
  timing       pvdc's vblank timestamps (jitter of 300 intervals / frame
               period), a wait for a vblank that has passed (/ frame
               period), legacy cursor moves per frame while the head flips
               on every vblank, and the frames those flips miss; a
               nonblocking flip ioctl to a fresh buffer / to one shown
  ui           distinct frames a D-Bus display listener receives / frames
               the guest flipped, at the mode's refresh: pvdc with one
               full-screen plane (shown straight from VRAM) and with an
               overlay over it (composed), virtio-gpu-pci with one plane;
               the same for a VNC client (which gets what the server sends
               at its own refresh), for GTK under Xvfb (the updates its
               console listener receives, QEMU's gd_update trace events)
               and for a SPICE client (spice-gtk: distinct pictures after
               the drawing it receives) with one plane on each device
  fbdev        pixels pvdc composes for one changed line of the fbdev
               console / for a full-screen change (guest RAM has no dirty
               log: only the driver's damage keeps the cost in proportion)

This is a benchmark, not a test: it is not part of the test suite, and a
MISS does not make it fail (the exit status is 0 unless it could not run).
It needs a built tree (scripts/test.sh or meson compile -C build/meson).
"""

import argparse
import glob
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

BENCH = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(BENCH, "..", "scripts"))
from pvdc_paths import BUILD, ROOT  # noqa: E402

sys.path.insert(0, os.path.join(ROOT, "tests", "guest"))
from pvdc_harness import GuestError, GuestVM, MmioAccesses  # noqa: E402

# (name, QEMU device options, guest driver or None)
PVDC = ("pvdc", ["-device", "pvdc,id=pvdc0"], "pvdc")
PVDC4 = ("pvdc 4 heads", ["-device", "pvdc,id=pvdc0,heads=4"], "pvdc")
BOCHS = ("bochs-display", ["-device", "bochs-display,romfile="], "bochs")
VIRTIO = ("virtio-gpu-pci", ["-device", "virtio-gpu-pci"], "virtio-gpu")
NONE = ("none", [], None)

# Memory regions of each device, as memory_region_ops_* traces name them
# (MmioAccesses matches them in full).
REGIONS = {
    "pvdc": r"pvdc\..*",
    "bochs-display": r"bochs dispi interface|qemu extended regs"
                     r"|bochs-display-mmio|edid",
    "virtio-gpu-pci": r"virtio-pci-\S+-virtio-gpu|msix-\S+",
}
NOTIFY = re.compile(r"^virtio-pci-notify-")
# virtio-gpu's commands, counted beside the MMIO accesses.
COMMANDS = "virtio_gpu_cmd_*"

SECTIONS = ["composition", "damage", "idle", "flips", "flipcost", "check",
            "timing", "ui", "fbdev"]


# -- statistics and the result table ---------------------------------------

def spread(values):
    """(low, high): min..max for few samples, else 10th..90th percentile."""
    v = sorted(values)
    if len(v) < 10:
        return v[0], v[-1]
    return v[len(v) // 10], v[min(len(v) - 1, len(v) * 9 // 10)]


def meets(target, value):
    """None when there is no target, else whether @value meets it."""
    if not target or value is None:
        return None
    m = re.match(r"^\s*(<=|>=|==|~)\s*([-0-9.]+)\s*$", target)
    if not m:
        return None
    op, ref = m.group(1), float(m.group(2))
    if op == "<=":
        return value <= ref + 1e-9
    if op == ">=":
        return value >= ref - 1e-9
    if op == "==":
        return abs(value - ref) < 1e-9
    return value <= 1.5 * ref          # "~1": no worse than half again


class Results:
    def __init__(self):
        self.rows = []

    def add(self, section, name, ratio, samples=None, baseline="",
            target="", value=None, unit="", extra=None, target_on="ratio"):
        """One row.  @ratio is the median of @samples (ratios); @value an
        absolute figure in @unit shown next to it.  @target applies to the
        ratio, or to the value if @target_on is "value"."""
        lo, hi = spread(samples) if samples else (None, None)
        checked = value if target_on == "value" else ratio
        row = {
            "section": section, "name": name, "ratio": ratio,
            "spread": [lo, hi] if samples else None,
            "samples": samples or [], "baseline": baseline,
            "value": value, "unit": unit, "target": target,
            "met": meets(target, checked), "extra": extra or {},
        }
        self.rows.append(row)
        print(f"  {section:<11} {name:<62} {fmt(ratio):>8} "
              f"{fmt_spread(row):>15} {fmt(value):>9} {unit:<8} "
              f"{target:>7} {status(row)}", flush=True)
        return row

    def failed(self, section, name, error):
        self.rows.append({"section": section, "name": name, "ratio": None,
                          "spread": None, "samples": [], "baseline": "",
                          "value": None, "unit": "", "target": "",
                          "met": False, "extra": {"error": str(error)}})
        print(f"  {section:<11} {name:<62} could not run: "
              f"{str(error).splitlines()[0]}", flush=True)


def fmt(x):
    if x is None:
        return "-"
    if abs(x) >= 100:
        return f"{x:.0f}"
    if abs(x) >= 0.1 or x == 0:
        return f"{x:.2f}"
    return f"{x:.4f}"


def fmt_spread(row):
    if not row["spread"]:
        return "-"
    return f"{fmt(row['spread'][0])}..{fmt(row['spread'][1])}"


def status(row):
    return {True: "ok", False: "MISS", None: "-"}[row["met"]]


def print_table(results):
    print()
    print(f"{'section':<11} {'row':<62} {'ratio':>8} {'spread':>15} "
          f"{'value':>9} {'unit':<8} {'target':>7} status")
    last = None
    for r in results.rows:
        if r["section"] != last and last is not None:
            print()
        last = r["section"]
        if r["ratio"] is None and r["value"] is None and r["extra"].get("error"):
            print(f"{r['section']:<11} {r['name']:<62} could not run")
            continue
        print(f"{r['section']:<11} {r['name']:<62} {fmt(r['ratio']):>8} "
              f"{fmt_spread(r):>15} {fmt(r['value']):>9} {r['unit']:<8} "
              f"{r['target']:>7} {status(r)}")
    print()
    print("ratio: median over the repeats against the row's baseline; "
          "spread: min..max (p10..p90 with 10+ samples)")
    misses = [r for r in results.rows if r["met"] is False]
    print(f"{len(misses)} row(s) miss their target"
          + (": " + "; ".join(r["name"] for r in misses) if misses else ""))


# -- composition -------------------------------------------------------------

def bench_composition(res, args):
    binary = os.path.join(BUILD, "bench", "compose-bench")
    subprocess.run(["make", "-s", "-C", BENCH, binary], check=True)
    rounds = 11 if args.quick else 31
    out = subprocess.run([binary, "--json", str(rounds)], check=True,
                         capture_output=True, text=True).stdout
    data = json.loads(out)
    scenes = {s["name"]: s for s in data["scenes"]}
    base = f"one {data['copy_bytes']}-byte memcpy"
    if "composition" in args.only:
        for s in data["scenes"]:
            res.add("composition", s["name"], statistics.median(s["ratio"]),
                    s["ratio"], base, s["target"],
                    value=statistics.median(s["ms"]), unit="ms")
        # bytes copied per frame out of guest pages, as x-bounce-bytes
        for c in data.get("copied", []):
            res.add("composition", c["name"], c["bytes"] / data["copy_bytes"],
                    None, f"bytes of one frame ({data['copy_bytes']})",
                    c["target"], value=c["bytes"], unit="B/frame",
                    target_on="value")
        # scenes compared with another one of the same rounds
        for s in data["scenes"]:
            if "per" not in s:
                continue
            other = scenes[s["per"]["scene"]]
            per_round = [a / b for a, b in zip(s["ms"], other["ms"])]
            res.add("composition", s["per"]["row"],
                    statistics.median(per_round), per_round,
                    f"'{other['name']}' in the same round",
                    s["per"]["target"], extra={"scene": s["name"]})
    if "damage" in args.only:
        for s in data["scenes"]:
            if "full" not in s:
                continue
            full = scenes[s["full"]]
            per_round = [d / f for d, f in zip(s["ms"], full["ms"])]
            res.add("damage", "recompose 64x64 damage / full frame",
                    statistics.median(per_round), per_round,
                    f"full recomposition of '{s['full']}'", "<= 0.05",
                    extra={"scene": s["name"]})


# -- guests ------------------------------------------------------------------

def accel_args(args):
    # KVM needs the host's CPU model (the kernel uses BMI2 early).
    return ["-accel", "kvm", "-cpu", "host"] if args.accel == "kvm" \
        else ["-accel", "tcg"]


def boot(device, args, extra=None, memory="512", append="", display=None):
    name, devices, driver = device
    append = append if driver == "pvdc" else "pvdc.noload"
    vm = GuestVM(devices=devices, append=append, memory=memory,
                 extra_args=accel_args(args) + (extra or []),
                 display=display)
    vm.start()
    if driver not in (None, "pvdc"):
        # Dependencies first, in the order the image builder wrote them.
        vm.check("for m in $(cat /etc/pvdc/extra-modules.order); do "
                 "insmod /lib/modules/$m 2>/dev/null; done; true")
    if driver is not None and not vm.poll("[ -e /dev/dri/card0 ]", 10):
        raise GuestError(f"no /dev/dri/card0 of {driver}")
    # A static console: no blinking cursor.
    vm.run("echo 0 > /sys/class/graphics/fbcon/cursor_blink")
    return vm


def cpu_ns(pid):
    """CPU time of every thread of @pid, in ns (schedstat: run time)."""
    total = 0
    for path in glob.glob(f"/proc/{pid}/task/*/schedstat"):
        try:
            with open(path) as f:
                total += int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            pass
    return total


def bench_idle(res, args):
    repeats = args.repeats
    interval = 4.0 if args.quick else 10.0
    # Past DRM's vblank off-delay (5 s): the last console update before
    # the cursor stopped blinking may keep the vblank interrupt on so long.
    settle = 8.0
    devices = [NONE, PVDC, BOCHS, VIRTIO]
    load = {d[0]: [] for d in devices}
    callbacks = []
    for rep in range(repeats):
        # Rotate the order so that no device always runs first.
        for device in devices[rep % 4:] + devices[:rep % 4]:
            name = device[0]
            try:
                vm = boot(device, args)
            except GuestError as e:
                res.failed("idle", f"{name}: boot", e)
                return
            try:
                time.sleep(settle)
                cb0 = vm.qom_get("x-timer-callbacks") if name == "pvdc" \
                    else None
                c0, w0 = cpu_ns(vm.get_pid()), time.monotonic()
                time.sleep(interval)
                c1, w1 = cpu_ns(vm.get_pid()), time.monotonic()
                if cb0 is not None:
                    callbacks.append((vm.qom_get("x-timer-callbacks") - cb0)
                                     / (w1 - w0))
                load[name].append((c1 - c0) / 1e9 / (w1 - w0))
            finally:
                vm.stop()
    base = statistics.median(load["none"])
    for name, _, _ in devices:
        ratios = [x / base for x in load[name]]
        res.add("idle", f"host CPU, idle console: {name}",
                statistics.median(ratios), ratios,
                "same VM without a display device",
                "<= 1.01" if name == "pvdc" else "",
                value=100 * statistics.median(load[name]), unit="% CPU",
                extra={"cpu_load": load[name], "interval_s": interval,
                       "settle_s": settle})
    res.add("idle", "pvdc timer callbacks per second while idle", None,
            None, "0 (no timer while idle)", "== 0",
            value=statistics.median(callbacks), unit="1/s",
            extra={"samples": callbacks}, target_on="value")


def parse_flipbench(out):
    heads, total, check = [], None, None
    for line in out.splitlines():
        fields = dict(kv.split("=", 1) for kv in line.split()[1:]
                      if "=" in kv)
        if line.startswith("flipbench head="):
            heads.append(fields)
        elif line.startswith("flipbench total"):
            total = fields
        elif line.startswith("checkbench"):
            check = fields
    for h in heads:
        if "error" in h:
            raise GuestError(f"flipbench head {h['head']}: {h['error']}")
    return heads, total, check


def bench_flips(res, args, vm, device, heads):
    seconds = 2 if args.quick else 5
    ratios, worst, missed, flips, per_vblank = [], [], 0, 0, []
    for _ in range(args.repeats):
        out = vm.check(f"pvdc-flipbench -k {heads} -t {seconds}",
                       timeout=seconds + 60)
        hs, _, _ = parse_flipbench(out)
        if len(hs) < heads:
            raise GuestError(f"only {len(hs)} of {heads} heads:\n{out}")
        per_head = [float(h["flips_per_s"]) / float(h["refresh_hz"])
                    for h in hs]
        ratios += per_head
        worst.append(min(per_head))
        per_vblank.append(min(int(h["flips"]) / max(int(h["seq_span"]), 1)
                              for h in hs))
        missed += sum(int(h["missed"]) for h in hs)
        flips += sum(int(h["flips"]) for h in hs)
    label = "1 head" if heads == 1 else f"{heads} heads from {heads} threads"
    res.add("flips", f"{device[0]}, {label}: flips/s per head / refresh",
            statistics.median(worst), worst,
            "refresh rate of the mode (1 flip per vblank)", ">= 0.99",
            extra={"per_head_ratios": ratios})
    res.add("flips", f"{device[0]}, {label}: flips per vblank (worst head)",
            statistics.median(per_vblank), per_vblank,
            "vblanks elapsed (event sequence numbers)", ">= 0.99")
    res.add("flips", f"{device[0]}, {label}: missed frames per 1000 flips",
            None, None, "0", "== 0",
            value=1000.0 * missed / max(flips, 1), unit="/1000",
            extra={"missed": missed, "flips": flips}, target_on="value")


def traced(vm, device, cmd, timeout):
    """Run @cmd in the guest with @device's MMIO accesses traced: their
    counts (and virtio-gpu's commands), and pvdc's timer callbacks
    meanwhile."""
    has_pvdc = "pvdc0" in " ".join(vm.devices)
    cb0 = vm.qom_get("x-timer-callbacks") if has_pvdc else 0
    trace = MmioAccesses(vm, REGIONS[device[0]], events=[COMMANDS])
    trace.start()
    try:
        vm.check(cmd, timeout=timeout)
    finally:
        accesses = trace.stop()
    cb = vm.qom_get("x-timer-callbacks") - cb0 if has_pvdc else 0
    counts = {"read": 0, "write": 0, "notify": 0,
              "commands": sum(trace.counted.values()), "registers": {}}
    for a in accesses:
        counts[a.kind] += 1
        key = f"{a.kind} {a.region}+{a.addr:#x}"
        counts["registers"][key] = counts["registers"].get(key, 0) + 1
        if a.kind == "write" and NOTIFY.match(a.region):
            counts["notify"] += 1
    return counts, cb


def cursor_cost(vm, device, moves):
    """MMIO accesses per legacy cursor move: a run of 2 * @moves less one
    of @moves, over @moves (what a run costs once cancels out)."""
    once, _ = traced(vm, device, f"pvdc-flips -n {moves} moves", 60 + moves)
    twice, _ = traced(vm, device, f"pvdc-flips -n {2 * moves} moves",
                      60 + 2 * moves)
    return sum(twice[k] - once[k] for k in ("read", "write")) / moves


def flip_cost(vm, device, flips):
    """Accesses per flip: a run of 2 * @flips flips less one of @flips,
    over @flips.  What a run costs once (modes, buffers, switching the
    vblank interrupt on and off) cancels out; what every flip costs,
    vblank bookkeeping included, stays."""
    once, cb1 = traced(vm, device, f"pvdc-flipbench -n {flips}", 60 + flips)
    twice, cb2 = traced(vm, device, f"pvdc-flipbench -n {2 * flips}",
                        60 + 2 * flips)
    per = {k: (twice[k] - once[k]) / flips for k in twice if k != "registers"}
    regs = {r: (n - once["registers"].get(r, 0)) / flips
            for r, n in twice["registers"].items()}
    per["registers"] = {r: round(v, 3) for r, v in
                        sorted(regs.items(), key=lambda x: -x[1])
                        if v >= 0.05}
    per["mmio"] = per["read"] + per["write"]
    per["timer_callbacks"] = (cb2 - cb1) / flips
    return per


def bench_guests(res, args):
    flips = 100 if args.quick else 300
    checks = 1000 if args.quick else 3000
    cost = {}
    check = {}
    cursor_mmio = None
    plan = [PVDC, PVDC4, BOCHS, VIRTIO]
    for device in plan:
        is4 = device is PVDC4
        if is4 and "flips" not in args.only:
            continue
        if not is4 and device is not PVDC and not (
                {"flipcost", "check"} & set(args.only)):
            continue
        try:
            vm = boot(device, args)
        except GuestError as e:
            res.failed("flips", f"{device[0]}: boot", e)
            continue
        try:
            if device is PVDC and "flips" in args.only:
                bench_flips(res, args, vm, device, 1)
            if is4:
                bench_flips(res, args, vm, device, 4)
            if not is4 and "flipcost" in args.only:
                if device is PVDC:
                    cursor_mmio = cursor_cost(vm, device, flips)
                cost[device[0]] = flip_cost(vm, device, flips)
            if not is4 and "check" in args.only:
                samples = []
                for _ in range(args.repeats):
                    out = vm.check(f"pvdc-flipbench -t 0 -c {checks}",
                                   timeout=120)
                    _, _, c = parse_flipbench(out)
                    if not c or "error" in c:
                        raise GuestError(f"checkbench: {out}")
                    samples.append(float(c["test_only_ns"]) /
                                   float(c["version_ns"]))
                check[device[0]] = samples
        except GuestError as e:
            res.failed("flips", f"{device[0]}", e)
        finally:
            vm.stop()

    if cost:
        base = cost.get("bochs-display")
        for name, per in cost.items():
            ratio = per["mmio"] / base["mmio"] \
                if base and base["mmio"] else None
            res.add("flipcost", f"{name}: MMIO accesses per flip", ratio,
                    None, "bochs-display, same run",
                    "<= 3" if name == "pvdc" else "",
                    value=per["mmio"], unit="access",
                    extra={k: v for k, v in per.items()}, target_on="value")
            if name == "virtio-gpu-pci":
                res.add("flipcost", f"{name}: virtqueue notifications per flip",
                        None, None, "", "", value=per["notify"], unit="kick")
                res.add("flipcost", f"{name}: device commands per flip",
                        None, None, "", "", value=per["commands"], unit="cmd")
            if name == "pvdc":
                res.add("flipcost", f"{name}: timer callbacks per flip",
                        None, None, "", "", value=per["timer_callbacks"],
                        unit="callback")
    if cursor_mmio is not None:
        # A move writes DST_POS and rings the doorbell, under the
        # device-wide irq_lock (pvdc_plane_atomic_async_update()).
        res.add("flipcost", "pvdc: MMIO accesses per legacy cursor move",
                None, None, "", "<= 2", value=cursor_mmio, unit="access",
                target_on="value")
    for name, samples in check.items():
        res.add("check", f"{name}: atomic TEST_ONLY / DRM_IOCTL_VERSION",
                statistics.median(samples), samples,
                "DRM_IOCTL_VERSION in the same guest", "")


INTERVALS = re.compile(r"# intervals: .* period (\d+) ns, mean ([\d.]+) ns, "
                       r"sigma ([\d.]+) ns")
PASSED = re.compile(r"^ok (wait-for-passed-sequence\S*) # (\d+) us", re.M)
FRESH = re.compile(r"# fresh: flip ioctl to a fresh buffer (\d+) ns, to a "
                   r"shown one (\d+) ns")
CURSOR = re.compile(r"# (\d+) flips over (\d+) frames, (\d+) missed, (\d+) "
                    r"latched later .*; (\d+) cursor moves \((\d+) refused\), "
                    r"([\d.]+) per frame")


def bench_timing(res, args):
    """Vblank timestamps, waits and cursor moves as pvdc's driver gives
    them, measured in the guest by pvdc-vblank and pvdc-cursor."""
    # iomem=relaxed: pvdc-vblank reads the device's registers through BAR0.
    vm = boot(PVDC, args, append="iomem=relaxed")
    try:
        jitter, passed, cursor, fresh = [], {}, [], []
        for _ in range(args.repeats):
            # The programs' own verdicts are the tests' business: a row
            # that misses its target is reported here, not dropped.
            _, out = vm.run("pvdc-vblank -n 300 intervals passed", 300)
            m = INTERVALS.search(out)
            if not m:
                raise GuestError(f"pvdc-vblank:\n{out}")
            period, sigma = float(m.group(1)), float(m.group(3))
            jitter.append(3 * sigma / period)
            for name, us in PASSED.findall(out):
                passed.setdefault(name, []).append(float(us))
            _, out = vm.run("pvdc-cursor -r 75 -m 0 -t 5 moves", 120)
            m = CURSOR.search(out)
            if not m:
                raise GuestError(f"pvdc-cursor:\n{out}")
            cursor.append([float(x) for x in m.groups()])
            _, out = vm.run("pvdc-flips -n 30 fresh", 300)
            m = FRESH.search(out)
            if not m:
                raise GuestError(f"pvdc-flips:\n{out}")
            fresh.append(float(m.group(1)) / float(m.group(2)))
    except GuestError as e:
        res.failed("timing", "pvdc", e)
        return
    finally:
        vm.stop()
    res.add("timing", "pvdc: 3 sigma of 300 vblank intervals / frame period",
            statistics.median(jitter), jitter, "frame period of the mode",
            "<= 0.0005", extra={"period_ns": period})
    for name, samples in passed.items():
        label = ("after the vblank interrupt went off"
                 if "interrupt-off" in name else "vblank interrupt on")
        res.add("timing", f"pvdc: wait for a passed vblank, {label}",
                statistics.median(samples) * 1000 / 500e6, None,
                "frame period (2 Hz mode)", "", value=statistics.median(samples),
                unit="us", extra={"samples_us": samples})
    moves = [c[6] for c in cursor]
    res.add("timing", "pvdc: cursor moves per frame while flipping each vblank",
            statistics.median(moves), moves, "one frame (75 Hz)", ">= 10")
    flips = sum(c[0] for c in cursor)
    res.add("timing", "pvdc: missed frames per 1000 flips during cursor moves",
            None, None, "0", "== 0",
            value=1000.0 * sum(c[2] for c in cursor) / max(flips, 1),
            unit="/1000", target_on="value",
            extra={"late": sum(c[3] for c in cursor), "flips": flips})
    # A fresh buffer is bound in the ioctl (pvdc_gem.c): sg table, DMA
    # mapping, BIND command; the flip still lands on the next vblank
    # (tests/guest/test_commit.py), this is what the binding costs.
    res.add("timing", "pvdc: nonblocking flip ioctl to a fresh buffer / to "
            "one shown before", statistics.median(fresh), fresh,
            "flip ioctl to a buffer already bound", "")


class DistinctPictures:
    """The distinct pictures a UI client's thread has received (_saw()),
    counted for the bench to read and wait for."""

    def __init__(self):
        import threading
        self.cond = threading.Condition()
        self.distinct = 0
        self.last = None

    def _saw(self, picture):
        with self.cond:
            if picture != self.last:
                self.distinct += 1
                self.last = picture
                self.cond.notify_all()

    def frames(self):
        with self.cond:
            return self.distinct

    def wait_frames(self, want, timeout):
        with self.cond:
            self.cond.wait_for(lambda: self.distinct >= want, timeout)
            return self.distinct


class VncFrameCounter(DistinctPictures):
    """An RFB client (raw encoding) that asks for every update and counts
    the distinct pictures they make, in a thread of its own."""

    def __init__(self, path):
        import socket
        import struct
        import threading
        from ui_clients import _recv_exact
        self.recv, self.struct = _recv_exact, struct
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(30)
        self.sock.connect(path)
        self.sock.sendall(self._handshake())
        super().__init__()
        self.stop = False
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _handshake(self):
        struct, sock = self.struct, self.sock
        self.recv(sock, 12)
        sock.sendall(b"RFB 003.008\n")
        self.recv(sock, self.recv(sock, 1)[0])
        sock.sendall(b"\x01")
        self.recv(sock, 4)
        sock.sendall(b"\x01")
        self.width, self.height = struct.unpack(">HH", self.recv(sock, 4))
        self.recv(sock, 16)
        self.recv(sock, struct.unpack(">I", self.recv(sock, 4))[0])
        return (struct.pack(">B3xBBBBHHHBBB3x", 0, 32, 24, 0, 1, 255, 255,
                            255, 16, 8, 0) +
                struct.pack(">BxHi", 2, 1, 0) +
                struct.pack(">BBHHHH", 3, 0, 0, 0, self.width, self.height))

    def _run(self):
        struct, sock = self.struct, self.sock
        fb = bytearray(self.width * self.height * 4)
        try:
            while not self.stop:
                kind = self.recv(sock, 1)[0]
                if kind == 2:
                    continue
                if kind == 3:
                    self.recv(sock, 3)
                    self.recv(sock, struct.unpack(">I", self.recv(sock, 4))[0])
                    continue
                _, rects = struct.unpack(">BH", self.recv(sock, 3))
                for _ in range(rects):
                    x, y, w, h, _ = struct.unpack(">HHHHi",
                                                  self.recv(sock, 12))
                    data = self.recv(sock, w * h * 4)
                    for row in range(h):
                        at = ((y + row) * self.width + x) * 4
                        fb[at:at + w * 4] = data[row * w * 4:
                                                 (row + 1) * w * 4]
                picture = bytes(fb)
                self._saw(picture)
                sock.sendall(struct.pack(">BBHHHH", 3, 1, 0, 0, self.width,
                                         self.height))
        except (OSError, AssertionError):
            pass

    def close(self):
        self.stop = True
        self.sock.close()
        self.thread.join(timeout=10)


class SpiceFrameCounter(DistinctPictures):
    """A SPICE client (spice-gtk's SpiceClientGLib, as remote-viewer uses
    it) of display channel 0 at the unix socket PATH that counts the
    distinct pictures of its primary surface, in a thread of its own that
    runs GLib's default main context.  QEMU's SPICE display sends a frame
    as strips (32 pixels wide, full height), each drawn and invalidated
    on its own: the client looks at its picture each time the drawing it
    received (display-invalidate) adds up to a whole surface, and a new
    primary surface (pvdc's direct path makes one at each flip) starts
    the count again."""

    def __init__(self, path, timeout=30):
        import threading
        super().__init__()
        self.error = None
        self.stop = False
        self.ctx = None
        self.primary = {}
        self.thread = threading.Thread(target=self._run, args=(path,),
                                       daemon=True)
        self.thread.start()
        with self.cond:
            if not self.cond.wait_for(lambda: self.primary or self.error,
                                      timeout):
                self.error = "no primary surface"
        if not self.primary:
            self.close()
            raise AssertionError(f"SPICE client at {path}: {self.error}")

    def _run(self, path):
        import ctypes
        import gi
        gi.require_version("SpiceClientGLib", "2.0")
        from gi.repository import GLib, GObject, SpiceClientGLib
        self.ctx = GLib.MainContext.default()
        session = SpiceClientGLib.Session()
        session.set_property("unix-path", path)
        primary = self.primary
        # Pixels drawn since the picture was last looked at.
        drawn = [0]

        def created(ch, fmt, width, height, stride, shmid, data):
            with self.cond:
                primary.update(size=stride * height, data=data,
                               area=width * height)
                drawn[0] = 0
                self.cond.notify_all()

        def invalidated(ch, x, y, width, height):
            drawn[0] += width * height

        def channel_new(sess, channel):
            if isinstance(channel, SpiceClientGLib.DisplayChannel) and \
                    channel.get_property("channel-id") == 0:
                GObject.Object.connect(channel, "display-primary-create",
                                       created)
                GObject.Object.connect(channel, "display-invalidate",
                                       invalidated)
                SpiceClientGLib.Channel.connect(channel)

        GObject.Object.connect(session, "channel-new", channel_new)
        if not session.connect():
            with self.cond:
                self.error = "cannot connect"
                self.cond.notify_all()
            return
        while not self.stop:
            self.ctx.iteration(True)
            if not primary or drawn[0] < primary["area"]:
                continue
            drawn[0] = 0
            picture = ctypes.string_at(primary["data"], primary["size"])
            self._saw(picture)
        session.disconnect()

    def close(self):
        self.stop = True
        if self.ctx:
            self.ctx.wakeup()
        self.thread.join(timeout=10)


class GtkUpdateCounter:
    """The updates QEMU's GTK window receives from the console it shows:
    its listener's gd_update trace events, which QEMU writes to the VM's
    log (and flushes) as they happen."""

    EVENT = "gd_update"

    def __init__(self, vm):
        self.vm = vm
        self.offset = os.path.getsize(vm.qemu_log)
        self.total = 0
        vm.cmd("trace-event-set-state", name=self.EVENT, enable=True)

    def frames(self):
        with open(self.vm.qemu_log, errors="replace") as f:
            f.seek(self.offset)
            for line in f:
                m = MmioAccesses.RECORD.match(line)
                self.total += bool(m and m.group(1) == self.EVENT)
            self.offset = f.tell()
        return self.total

    def wait_frames(self, want, timeout):
        # The console calls its listeners as a frame is pushed, before the
        # guest learns that its flip is done: every update is logged.
        return self.frames()

    def close(self):
        pass


class UiClient:
    """A UI (UI: "D-Bus", "VNC", "GTK" or "SPICE") of a guest's display,
    set up in TMP: display() gives QEMU's arguments, attach(vm) the frame
    counter on the guest's first console, stop() undoes both."""

    def __init__(self, ui, tmp):
        import ui_clients
        self.ui, self.tmp = ui, tmp
        self.bus = ui_clients.DBusDisplay(tmp)
        self.xvfb = ui_clients.Xvfb(tmp) if ui == "GTK" else None
        self.socket = os.path.join(tmp, ui.lower())
        self.counter = None
        self.environ = None

    def display(self):
        if self.ui == "D-Bus":
            return ["-display", f"dbus,addr={self.bus.start_bus()}"]
        if self.ui == "VNC":
            return ["-display", "none", "-vnc", f"unix:{self.socket}"]
        if self.ui == "SPICE":
            return ["-display", "none", "-spice",
                    f"unix=on,addr={self.socket},disable-ticketing=on"]
        # GTK: QEMU's window on an X server of its own, found through
        # DISPLAY in the environment QEMU inherits.
        self.xvfb.start()
        self.environ = os.environ.copy()
        os.environ.update(self.xvfb.env())
        return ["-display", "gtk,gl=off"]

    def attach(self, vm):
        from test_push import FrameCounter
        if self.ui == "D-Bus":
            self.bus.connect()
            self.bus.wait_for_qemu()
            console = min(p for p, props in self.bus.consoles().items()
                          if props.get("Type") == "Graphic")
            with open(os.path.join(os.path.realpath(
                    os.path.join(BUILD, "qemu")), "ui",
                    "dbus-display1.xml")) as f:
                self.counter = FrameCounter(self.bus, console, f.read())
        elif self.ui == "VNC":
            self.counter = VncFrameCounter(self.socket)
        elif self.ui == "SPICE":
            self.counter = SpiceFrameCounter(self.socket)
        else:
            self.counter = GtkUpdateCounter(vm)
        return self.counter

    def stop(self):
        if self.counter:
            self.counter.close()
        self.bus.stop()
        if self.xvfb:
            self.xvfb.stop()
        if self.environ is not None:
            os.environ.clear()
            os.environ.update(self.environ)


# The UIs whose frames the ui section counts.
UIS = ["D-Bus", "VNC", "GTK", "SPICE"]


def bench_ui(res, args):
    """Frames a UI receives against the frames the guest flips, each
    device in a guest of its own with that UI: the D-Bus display on a
    private bus (tests/ui/test_push.py's listener), VNC, GTK under Xvfb,
    SPICE."""
    sys.path.insert(0, os.path.join(ROOT, "tests", "ui"))
    flips = 150 if args.quick else 450
    # The same mode on both devices, the size the guest's console has.
    pvdc = ("pvdc", ["-device", "pvdc,id=pvdc0,xres=640,yres=480"], "pvdc")
    virtio = ("virtio-gpu-pci",
              ["-device", "virtio-gpu-pci,xres=640,yres=480"], "virtio-gpu")
    cases = []
    for ui in UIS:
        cases.append((pvdc, ui, "one full-screen plane (direct)", ""))
        if ui == "D-Bus":
            cases.append((pvdc, ui, "an overlay over the primary (composed)",
                          "-o"))
        cases.append((virtio, ui, "one full-screen plane", ""))
    samples, pushed = {}, {}
    for device, ui, what, opts in cases:
        tmp = tempfile.mkdtemp(prefix="pvdc-bench-ui-")
        client = UiClient(ui, tmp)
        key = f"{device[0]}, {ui}, {what}"
        try:
            vm = boot(device, args, display=client.display())
        except (GuestError, OSError, AssertionError) as e:
            res.failed("ui", key, e)
            client.stop()
            continue
        try:
            counter = client.attach(vm)
            for _ in range(args.repeats):
                before = counter.frames()
                push0 = vm.qom_get("x-console0-pushes") \
                    if device is pvdc else None
                out = vm.check(f"pvdc-flipbench -k 1 -n {flips} {opts}",
                               timeout=120 + flips)
                hs, _, _ = parse_flipbench(out)
                if not hs:
                    raise GuestError(f"flipbench:\n{out}")
                flipped = int(hs[0]["flips"])
                # What was sent arrives: a bounded wait, not a measure.
                got = counter.wait_frames(before + flipped, timeout=5)
                samples.setdefault(key, []).append((got - before) / flipped)
                if push0 is not None:
                    pushed.setdefault(key, []).append(
                        (vm.qom_get("x-console0-pushes") - push0) / flipped)
        except (GuestError, AssertionError) as e:
            res.failed("ui", key, e)
        finally:
            vm.stop()
            client.stop()
    for device, ui, what, _ in cases:
        key = f"{device[0]}, {ui}, {what}"
        if key in samples:
            res.add("ui", f"{key}: frames received / flipped",
                    statistics.median(samples[key]), samples[key],
                    "guest's flips at the mode's refresh",
                    ">= 0.95" if device is pvdc and ui == "D-Bus" else "")
        if key in pushed and ui == "D-Bus":
            # What the device handed to the UI, apart from what the D-Bus
            # display then drops for a listener that falls behind.
            res.add("ui", f"{device[0]}, {what}: frames pushed / flipped",
                    statistics.median(pushed[key]), pushed[key],
                    "guest's flips at the mode's refresh", ">= 0.99")


# -- fbdev damage ------------------------------------------------------------

COMPOSE = re.compile(r"pvdc_compose head (\d+) rect -?\d+,-?\d+ (\d+)x(\d+)")


def composed_pixels(vm, cmd, settle=1.0, timeout=10.0):
    """Pixels pvdc composes for what @cmd draws on the console: the
    areas of its pvdc_compose trace records from the first one until none
    has come for @settle seconds (the damage reaches the device from the
    fbdev helper's worker, the picture is composed at the UI's next
    refresh)."""
    trace = MmioAccesses(vm, "", kinds=(), events=["pvdc_compose"])
    trace.start()
    try:
        vm.check(cmd)
        start = trace.offset
        deadline = time.monotonic() + timeout
        while os.path.getsize(vm.qemu_log) == start and \
                time.monotonic() < deadline:
            time.sleep(0.05)
        seen, last = -1, time.monotonic()
        while time.monotonic() - last < settle:
            time.sleep(0.1)
            n = os.path.getsize(vm.qemu_log)
            if n != seen:
                seen, last = n, time.monotonic()
    finally:
        trace.stop()
    return sum(int(m.group(2)) * int(m.group(3))
               for m in map(COMPOSE.search, trace.records) if m)


def bench_fbdev(res, args):
    sys.path.insert(0, os.path.join(ROOT, "tests", "ui"))
    width, height = 640, 480
    device = ("pvdc", ["-device", f"pvdc,id=pvdc0,xres={width},"
                       f"yres={height}"], "pvdc")
    tmp = tempfile.mkdtemp(prefix="pvdc-bench-fbdev-")
    vnc = os.path.join(tmp, "vnc")
    # A listener that asks for every update: without one nothing is
    # composed at all.
    try:
        vm = boot(device, args, display=["-display", "none",
                                         "-vnc", f"unix:{vnc}"])
    except GuestError as e:
        res.failed("fbdev", "boot", e)
        return
    counter = None
    line, full = [], []
    try:
        counter = VncFrameCounter(vnc)
        rows = int(vm.check("stty size < /dev/tty1").split()[0])
        text = "x" * 40
        for _ in range(args.repeats):
            # One character row in the middle of the screen, the cursor
            # there before and after: fbcon damages where it moves from,
            # so the move is composed first, apart.
            composed_pixels(vm, f"printf '\\033[{rows // 2};1H' > /dev/tty1")
            line.append(composed_pixels(
                vm, f"printf '{text}\\r' > /dev/tty1"))
            full.append(composed_pixels(
                vm, f"printf '\\033[2J\\033[H' > /dev/tty1; "
                    f"for i in $(seq {rows - 1}); do echo {text}; "
                    f"done > /dev/tty1"))
    except (GuestError, OSError, ValueError) as e:
        res.failed("fbdev", "console writes", e)
    finally:
        if counter:
            counter.close()
        vm.stop()
    if not line or not all(full):
        return
    ratios = [a / b for a, b in zip(line, full)]
    res.add("fbdev", "composed pixels: one console line / full screen",
            statistics.median(ratios), ratios,
            "a full-screen console change",
            f"<= {2.0 / rows:.3f}",
            extra={"line_pixels": line, "full_pixels": full,
                   "rows": rows, "frame_pixels": width * height})


# -- main --------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true",
                    help="fewer repeats and shorter intervals (~3 minutes)")
    ap.add_argument("--repeats", type=int, default=None,
                    help="repeats of each guest measurement (3; quick: 1)")
    ap.add_argument("--only", default=",".join(SECTIONS),
                    help="comma-separated sections (%(default)s)")
    ap.add_argument("--accel", default="tcg", choices=["tcg", "kvm"],
                    help="accelerator of the guests (%(default)s, as the "
                         "guest tests use)")
    ap.add_argument("-o", "--output",
                    default=os.path.join(BUILD, "bench", "results.json"))
    args = ap.parse_args()
    args.only = [s for s in args.only.split(",") if s]
    unknown = set(args.only) - set(SECTIONS)
    if unknown:
        ap.error(f"unknown section(s): {', '.join(sorted(unknown))}")
    if args.repeats is None:
        args.repeats = 1 if args.quick else 3
    os.environ.setdefault("PVDC_INITRAMFS",
                          os.path.join(BUILD, "meson", "initramfs.gz"))

    res = Results()
    t0 = time.monotonic()
    print(f"pvdc bench: sections {','.join(args.only)}, accel {args.accel}, "
          f"{args.repeats} repeat(s)", flush=True)
    if {"composition", "damage"} & set(args.only):
        bench_composition(res, args)
    if "idle" in args.only:
        bench_idle(res, args)
    if {"flips", "flipcost", "check"} & set(args.only):
        bench_guests(res, args)
    if "timing" in args.only:
        bench_timing(res, args)
    if "ui" in args.only:
        bench_ui(res, args)
    if "fbdev" in args.only:
        bench_fbdev(res, args)
    elapsed = time.monotonic() - t0

    print_table(res)
    os.makedirs(os.path.dirname(args.output), exist_ok=True)
    with open(args.output, "w") as f:
        json.dump({
            "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "host": {"cpus": os.cpu_count(), "uname": " ".join(os.uname())},
            "accel": args.accel, "quick": args.quick,
            "repeats": args.repeats, "elapsed_s": round(elapsed, 1),
            "rows": res.rows,
        }, f, indent=1)
    print(f"{elapsed:.0f} s; results in {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
