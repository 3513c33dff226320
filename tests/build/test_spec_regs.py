#!/usr/bin/python3
"""The register spec and the register header say the same (TAP).

include/hw/display/pvdc-regs.h is where every register offset is written;
docs/specs/pvdc.rst describes each register with its offset beside it.
This test reads both: every register the spec describes must have the
header's offset, and every register of the header must be in the spec.
The windows are read from the sections that describe them: the global
window (PVDC_REG_*), head control (PVDC_HEAD_*) and the head and plane
state tables (PVDC_HS_*, PVDC_PS_*).
"""

import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "scripts"))
from pvdc_paths import ROOT  # noqa: E402
from pvdc_tap import Tap  # noqa: E402

HEADER = os.path.join(ROOT, "include", "hw", "display", "pvdc-regs.h")
SPEC = os.path.join(ROOT, "docs", "specs", "pvdc.rst")
# Section title of the spec -> the header's prefix for its registers.
WINDOWS = {"Global window": "PVDC_REG_",
           "Plane capabilities": "PVDC_REG_",
           "Head control window": "PVDC_HEAD_",
           "Head state (shadow and active windows)": "PVDC_HS_",
           "Plane state (shadow and active windows)": "PVDC_PS_"}
# Macros with a register prefix that are not registers of that window.
NOT_REGISTERS = {"PVDC_HEAD_STRIDE", "PVDC_HEAD_CONTROL_BASE",
                 "PVDC_HEAD_SHADOW_BASE", "PVDC_HEAD_ACTIVE_BASE",
                 "PVDC_HEAD_STATE_REGS", "PVDC_HEAD_CONTROL",
                 "PVDC_HEAD_SHADOW", "PVDC_HEAD_ACTIVE"}
# "``A``, ``B`` (0x1c, 0x20, RO)", "``A`` (0x28, RW), ``B`` (0x2c, RO)",
# "``A``, ``B``, ``C`` (0xc0..0xc8, RO)", "``A(i)`` (0x80 + 4 * i, RO)".
ENTRY = re.compile(r"((?:``\w+(?:\(\w\))?``(?:, )?)+) "
                   r"\(((?:0x|RO|RW|W\b)[^)]*)\)(?:, |$)")
ROW = re.compile(r"^(0x[0-9a-f]+)\s+``(\w+)``", re.M)
DEFINE = re.compile(r"^#define\s+(PVDC_\w+)(\((\w)\))?\s+(.*?)\s*(?:/\*.*)?$",
                    re.M)


def header_registers():
    """{name: offset} of the header's registers, arrays at index 0 with
    their stride: {name(i): (base, stride)}."""
    with open(HEADER) as f:
        text = f.read()
    regs = {}
    for name, _, arg, value in DEFINE.findall(text):
        if not any(name.startswith(p) for p in set(WINDOWS.values())) or \
                name in NOT_REGISTERS or \
                re.search(r"_(SHIFT|LENGTH|MASK|REGS)$", name):
            continue
        if arg:
            m = re.fullmatch(rf"\((0x[0-9a-fA-F]+) \+ \({arg}\) \* (\d+)\)",
                             value)
            if m:
                regs[f"{name}({arg})"] = (int(m.group(1), 16),
                                          int(m.group(2)))
            continue
        if re.fullmatch(r"0x[0-9a-fA-F]+", value):
            regs[name] = int(value, 16)
    # A field is named after its register: PVDC_HS_CTRL_ENABLE.
    return {n: v for n, v in regs.items()
            if not any(n.startswith(o + "_") for o in regs if o != n)}


def spec_registers():
    """{header name: offset or (base, stride)} of what the spec's register
    sections describe, and the lines it could not read."""
    with open(SPEC) as f:
        lines = f.read().splitlines()
    found, unread, prefix = {}, [], None
    for i, line in enumerate(lines):
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if nxt and re.fullmatch(r"[~=-]+", nxt) and len(nxt) >= len(line):
            prefix = WINDOWS.get(line)
            continue
        if not prefix:
            continue
        row = ROW.match(line)
        if row:
            found[prefix + row.group(2).split("_", 1)[1]] = \
                int(row.group(1), 16)
            continue
        if not ENTRY.match(line):
            continue
        for names, where in ENTRY.findall(line):
            names = re.findall(r"``(\w+(?:\(\w\))?)``", names)
            offs = [w.strip() for w in where.split(",")]
            arr = re.fullmatch(r"(0x[0-9a-f]+) \+ (\d+) \* (\w)", offs[0])
            rng = re.fullmatch(r"(0x[0-9a-f]+)\.\.(0x[0-9a-f]+)", offs[0])
            if arr and len(names) == 1:
                found[prefix + names[0]] = (int(arr.group(1), 16),
                                            int(arr.group(2)))
            elif rng:
                lo, hi = int(rng.group(1), 16), int(rng.group(2), 16)
                if hi - lo != 4 * (len(names) - 1):
                    unread.append(line)
                for k, n in enumerate(names):
                    found[prefix + n] = lo + 4 * k
            elif all(re.fullmatch(r"0x[0-9a-f]+", o)
                     for o in offs[:len(names)]):
                for n, o in zip(names, offs):
                    found[prefix + n] = int(o, 16)
            elif not re.fullmatch(r"[A-Z0-9]+", offs[0]):
                unread.append(line)
    return found, unread


def main():
    tap = Tap()
    header = header_registers()
    spec, unread = spec_registers()
    tap.result(len(header) > 80 and len(spec) > 80,
               f"both name the registers (header {len(header)}, "
               f"spec {len(spec)})")
    tap.result(not unread, "every register line of the spec is read",
               "\n".join(unread))
    # PLANE_CAPS(p) is described in prose: its offset is in the map table.
    wrong = [f"{n}: spec {spec[n]!r}, header {header.get(n)!r}"
             for n in sorted(spec) if spec[n] != header.get(n)]
    tap.result(not wrong, "each register in the spec has the header's "
               "offset", "\n".join(wrong))
    missing = sorted(set(header) - set(spec) - {"PVDC_REG_PLANE_CAPS(p)"})
    tap.result(not missing, "each register of the header is in the spec",
               "\n".join(missing))
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
