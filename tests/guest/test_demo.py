#!/usr/bin/python3
"""The README's demo command boots the demo VM and writes a screenshot of
every head (TAP).  Runs scripts/demo.py for a few seconds without GTK."""

import os
import subprocess
import sys
import tempfile
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pvdc_harness import GuestError, Tap, read_png  # noqa: E402
from pvdc_paths import ROOT  # noqa: E402

HEADS = 2


def png_colours(path):
    """Width, height and the distinct colours of a PNG, sampled every 16
    pixels of every 16th row."""
    pic = read_png(path)
    return pic.width, pic.height, {pic.pixel(x, y)
                                   for y in range(0, pic.height, 16)
                                   for x in range(0, pic.width, 16)}


def main():
    out = tempfile.mkdtemp(prefix="pvdc-demo-test-")
    tap = Tap()

    def case(name, ok, why):
        tap.result(ok, name, why)

    try:
        # demo.py bounds each of its own steps; this bounds a hang of it.
        proc = subprocess.run([sys.executable,
                               os.path.join(ROOT, "scripts", "demo.py"),
                               "--no-gtk", "--duration", "6", "--interval",
                               "3", "--out", out], capture_output=True,
                              text=True, timeout=900)
    except subprocess.TimeoutExpired as e:
        out_so_far = e.stdout or ""
        if isinstance(out_so_far, bytes):
            out_so_far = out_so_far.decode(errors="replace")
        proc = subprocess.CompletedProcess(e.cmd, -1, out_so_far,
                                           f"no end within {e.timeout} s")

    case("the demo VM boots, runs and stops cleanly", proc.returncode == 0,
         proc.stdout + proc.stderr)
    case("the demo says where to look",
         "vnc://127.0.0.1:" in proc.stdout and out in proc.stdout, proc.stdout)
    for head in range(HEADS):
        path = os.path.join(out, f"head{head}.png")
        try:
            w, h, colours = png_colours(path)
            ok = w >= 640 and h >= 480 and len(colours) >= 8
            why = f"{w}x{h}, {len(colours)} colours"
        except (OSError, GuestError, zlib.error) as e:
            ok, why = False, e
        case(f"head {head}: the screenshot shows a picture", ok, why)
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
