#!/usr/bin/python3
"""The README's demo command boots the demo VM and writes a screenshot of
every head (TAP).  Runs scripts/demo.py for a few seconds without GTK."""

import os
import subprocess
import sys
import tempfile
import zlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "scripts"))
from pvdc_paths import ROOT  # noqa: E402
from pvdc_tap import Tap  # noqa: E402

HEADS = 2


def png_pixels(path):
    """Width, height and the distinct colours of an 8-bit RGB(A) PNG."""
    with open(path, "rb") as f:
        data = f.read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        length = int.from_bytes(data[pos:pos + 4], "big")
        kind = data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height = int.from_bytes(body[0:4], "big"), \
                int.from_bytes(body[4:8], "big")
            depth, ctype = body[8], body[9]
            assert depth == 8 and ctype in (2, 6), f"PNG type {ctype}/{depth}"
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * bpp
    colours, prev = set(), bytearray(stride)
    for y in range(height):
        ftype = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if ftype == 1:
                line[i] = (line[i] + a) & 0xff
            elif ftype == 2:
                line[i] = (line[i] + b) & 0xff
            elif ftype == 3:
                line[i] = (line[i] + (a + b) // 2) & 0xff
            elif ftype == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else b if pb <= pc else c
                line[i] = (line[i] + pred) & 0xff
        if y % 16 == 0:
            for x in range(0, width, 16):
                colours.add(bytes(line[x * bpp:x * bpp + 3]))
        prev = line
    return width, height, colours


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
            w, h, colours = png_pixels(path)
            ok = w >= 640 and h >= 480 and len(colours) >= 8
            why = f"{w}x{h}, {len(colours)} colours"
        except (OSError, AssertionError, zlib.error) as e:
            ok, why = False, e
        case(f"head {head}: the screenshot shows a picture", ok, why)
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
