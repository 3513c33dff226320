#!/usr/bin/python3
"""The driver's register header is QEMU's, in kernel spelling (TAP).

guest-driver/pvdc-regs.h is generated from include/hw/display/pvdc-regs.h
by scripts/gen-kernel-regs.py.  The copy must be what the generator makes
now, the driver must build from it alone (no include path into QEMU's
tree), and every macro must have the source's value: a kernel module
built against the guest kernel's headers (so BIT() and GENMASK() are the
kernel's own) includes both headers, the source one with every name it
defines prefixed QEMU_, and checks each object-like macro, each
function-like macro at a few arguments, and each bit field the copy adds
(against the source's _SHIFT and _MASK or _LENGTH, and as a mask
FIELD_PREP() takes) with static_assert().
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "scripts"))
from pvdc_tap import Tap  # noqa: E402
from pvdc_paths import BUILD, ROOT  # noqa: E402

SOURCE = os.path.join(ROOT, "include", "hw", "display", "pvdc-regs.h")
COPY = os.path.join(ROOT, "guest-driver", "pvdc-regs.h")
DEFINE = re.compile(r"^#\s*define\s+(\w+)(\(([^)]*)\))?", re.M)
# Arguments the function-like macros are compared at: small enough to be
# in the domain of each (a head, a plane, an index), where a shift is
# defined whatever the type of its operand.
SAMPLES = [0, 1, 2, 3, 5, 7]


def macros(path):
    """{name: None for object-like, [params] for function-like}, minus the
    include guard and definitions for kernels that lack one (under an
    #ifndef of their own name)."""
    with open(path) as f:
        text = f.read()
    guard = re.search(r"^#\s*ifndef\s+(\w+)", text, re.M).group(1)
    compat = set(re.findall(r"^#\s*ifndef\s+(\w+)\s*\n#\s*define\s+\1\b",
                            text, re.M)) - {guard}
    out = {}
    for m in DEFINE.finditer(text):
        if m.group(1) != guard and m.group(1) not in compat:
            out[m.group(1)] = [p.strip() for p in m.group(3).split(",")] \
                if m.group(2) else None
    return out, guard


def check_source(src, copy):
    """The module's C: a static_assert per value."""
    lines = ["// SPDX-License-Identifier: GPL-2.0-only",
             "#include <linux/bitfield.h>", "#include <linux/build_bug.h>",
             "#include <linux/module.h>", '#include "pvdc-regs.h"',
             '#include "qemu-pvdc-regs.h"', ""]
    for name, params in src.items():
        lines += [f"#ifndef {name}",
                  f'#error "{name} is missing from guest-driver/pvdc-regs.h"',
                  "#endif"]
        if params is None:
            lines.append(f'static_assert(({name}) == (QEMU_{name}), '
                         f'"{name} differs");')
            continue
        for k in range(len(SAMPLES)):
            args = ", ".join(str(SAMPLES[(k + i) % len(SAMPLES)])
                             for i in range(len(params)))
            lines.append(f'static_assert(({name}({args})) == '
                         f'(QEMU_{name}({args})), "{name}({args}) differs");')
    for name, params in copy.items():
        if name in src:
            continue
        base = name[:-len("_FIELD")] if name.endswith("_FIELD") else name
        if params is not None or base + "_SHIFT" not in src:
            lines.append(f'#error "{name} is not from the source header"')
            continue
        shift = f"QEMU_{base}_SHIFT"
        if base + "_LENGTH" in src:
            width = f"((1ULL << QEMU_{base}_LENGTH) - 1)"
        else:
            mask = f"(unsigned long long)QEMU_{base}_MASK"
            width = f"(({mask} & 1) ? {mask} : {mask} >> {shift})"
        lines += [f'static_assert({name} == {width} << {shift}, '
                  f'"{name} is not the field of {base}_SHIFT");',
                  f'static_assert(FIELD_PREP_CONST({name}, {width}) == '
                  f'{name}, "{name} is no mask for FIELD_PREP()");']
    lines += ["", 'MODULE_DESCRIPTION("pvdc-regs.h: generated == source");',
              'MODULE_LICENSE("GPL");', ""]
    return "\n".join(lines)


def renamed_source(names, guard):
    """The source header with every name it defines prefixed QEMU_."""
    with open(SOURCE) as f:
        text = f.read()
    pattern = re.compile(r"\b(" + "|".join(sorted(map(re.escape,
                                                      list(names) + [guard]),
                                                  key=len, reverse=True))
                         + r")\b")
    return pattern.sub(r"QEMU_\1", text)


def main():
    tap = Tap()
    p = subprocess.run([sys.executable,
                        os.path.join(ROOT, "scripts", "gen-kernel-regs.py"),
                        "--check"], capture_output=True, text=True)
    tap.result(p.returncode == 0, "guest-driver/pvdc-regs.h is what "
             "scripts/gen-kernel-regs.py makes of "
             "include/hw/display/pvdc-regs.h now",
             p.stdout + p.stderr + "\n(run scripts/gen-kernel-regs.py)")

    with open(os.path.join(ROOT, "guest-driver", "Kbuild")) as f:
        kbuild = f.read()
    # -I$(src) is the driver's own folder (define_trace.h needs it).
    tap.result("include/hw" not in kbuild and
             not re.search(r"(^|\s)-I(?!\$\(src\)(\s|$))", kbuild, re.M),
             "the driver builds without an include path into QEMU's tree",
             kbuild)

    src, guard = macros(SOURCE)
    copy, _ = macros(COPY)
    try:
        kver = open(os.path.join(BUILD, "kernel-version")).read().strip()
    except OSError as e:
        tap.result(False, "every macro has the source's value", e)
        return tap.done()
    kdir = f"/usr/src/linux-headers-{kver}"
    tmp = tempfile.mkdtemp(prefix="pvdc-regs-check-")
    try:
        with open(os.path.join(tmp, "pvdc_regs_check.c"), "w") as f:
            f.write(check_source(src, copy))
        with open(os.path.join(tmp, "qemu-pvdc-regs.h"), "w") as f:
            f.write(renamed_source(src, guard))
        with open(os.path.join(tmp, "Kbuild"), "w") as f:
            f.write("ccflags-y += -I" + os.path.join(ROOT, "guest-driver") +
                    "\nobj-m += pvdc_regs_check.o\n")
        p = subprocess.run(["make", "-s", "-C", kdir, f"M={tmp}", "modules"],
                           capture_output=True, text=True, timeout=600)
        checked = sum(1 if v is None else len(SAMPLES) for v in src.values())
        extra = len(set(copy) - set(src))
        tap.result(p.returncode == 0,
                 f"every macro of guest-driver/pvdc-regs.h has the source's "
                 f"value ({len(src)} macros, {checked} values, {extra} bit "
                 f"fields; static_assert in a {kver} module build)",
                 p.stdout + p.stderr)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
