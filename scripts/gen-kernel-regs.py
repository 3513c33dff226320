#!/usr/bin/python3
"""Generate the guest driver's register header from QEMU's.

    gen-kernel-regs.py [-o guest-driver/pvdc-regs.h] [--check]

include/hw/display/pvdc-regs.h is the single source of truth for the
register map.  A Linux driver cannot include a header from QEMU's tree, so
guest-driver/pvdc-regs.h is generated from it: every macro under the same
name and with the same value, in the kernel's spelling (BIT(n) for single
bits, GENMASK_U32(h, l) for masks: registers are 32-bit, and a mask keeps
the type of the values it is applied to; tabs), plus, for each bit field
the source describes with NAME_SHIFT and NAME_MASK (unshifted or shifted)
or NAME_LENGTH, the field in place as NAME = GENMASK_U32(h, l), for
FIELD_GET() and FIELD_PREP().  The generator knows no register: it reads the values
by compiling the source header, so new or renamed macros need nothing
here.  tests/build/test_driver_regs.py fails when the copy is stale and
compares every value at compile time in a kernel build.

With --check, print nothing and exit 1 if the output file is not what
would be generated.
"""

import argparse
import difflib
import os
import re
import subprocess
import sys
import tempfile

from pvdc_paths import ROOT

SOURCE = "include/hw/display/pvdc-regs.h"
OUTPUT = "guest-driver/pvdc-regs.h"
GUARD = "PVDC_REGS_H"
DEFINE = re.compile(r"^#\s*define\s+(\w+)(\([^)]*\))?(.*)$")
VALUE_COLUMN = 40       # five tabs


def logical_lines(text):
    """The source's lines, a macro continued with backslashes as one
    (original lines, joined text)."""
    lines, out = text.splitlines(), []
    i = 0
    while i < len(lines):
        group = [lines[i]]
        while group[-1].endswith("\\") and i + 1 < len(lines):
            i += 1
            group.append(lines[i])
        out.append((group, " ".join(g.rstrip("\\").strip()
                                    for g in group)))
        i += 1
    return out


def split_comment(value):
    """(expression, trailing /* comment */ or "")."""
    m = re.match(r"^(.*?)\s*(/\*.*\*/)\s*$", value)
    return (m.group(1).strip(), m.group(2)) if m else (value.strip(), "")


def evaluate(source_path, names):
    """{name: integer value} of the object-like macros NAMES, read by
    compiling the source header with the host's C compiler."""
    prog = ["#include <stdio.h>", f'#include "{source_path}"',
            "int main(void)", "{"]
    for name in names:
        prog.append(f'\tprintf("%s %llu\\n", "{name}", '
                    f"(unsigned long long)({name}));")
    prog += ["\treturn 0;", "}", ""]
    with tempfile.TemporaryDirectory() as tmp:
        c, exe = os.path.join(tmp, "eval.c"), os.path.join(tmp, "eval")
        with open(c, "w") as f:
            f.write("\n".join(prog))
        p = subprocess.run(["cc", "-std=gnu11", "-w", "-o", exe, c],
                           capture_output=True, text=True)
        if p.returncode:
            sys.exit(f"gen-kernel-regs: {SOURCE} does not compile as "
                     f"integer constants:\n{p.stderr}")
        out = subprocess.run([exe], capture_output=True, text=True,
                             check=True).stdout
    return {n: int(v) for n, v in (l.split() for l in out.splitlines())}


def contiguous(v):
    """(high, low) bit of a non-zero run of ones, else None."""
    if v <= 0:
        return None
    low = (v & -v).bit_length() - 1
    high = v.bit_length() - 1
    return (high, low) if v == ((1 << (high + 1)) - (1 << low)) else None


def kernel_value(name, expr, value):
    m = re.fullmatch(r"\(?\s*1[uUlL]*\s*<<\s*(\d+)\s*\)?", expr)
    if m:
        return f"BIT({m.group(1)})"
    # A flag derived from its field's _SHIFT: the bit it is.
    if re.fullmatch(r"\(?\s*1[uUlL]*\s*<<\s*\w+_SHIFT\s*\)?", expr) and \
            value and value & (value - 1) == 0:
        return f"BIT({value.bit_length() - 1})"
    if name.endswith("_MASK") and value is not None and contiguous(value):
        return "GENMASK_U32(%d, %d)" % contiguous(value)
    return expr


def fields(values):
    """{field name: (high, low)} for every NAME_SHIFT with a NAME_MASK or
    NAME_LENGTH, and the macro after which it goes."""
    out = {}
    for name, shift in values.items():
        if not name.endswith("_SHIFT"):
            continue
        base = name[:-len("_SHIFT")]
        width = None
        if base + "_LENGTH" in values:
            width = values[base + "_LENGTH"]
        elif base + "_MASK" in values:
            run = contiguous(values[base + "_MASK"])
            if run and run[1] == 0:             # unshifted: ones from bit 0
                width = run[0] + 1
            elif run and run[1] == shift:       # already in place
                width = run[0] - run[1] + 1
        if not width:
            continue
        field = base if base not in values else base + "_FIELD"
        last = max((n for n in (name, base + "_LENGTH", base + "_MASK")
                    if n in values), key=list(values).index)
        out[field] = ((shift + width - 1, shift), last)
    return out


def define(name, value, comment=""):
    head = f"#define {name}"
    pad = max(1, -(-(VALUE_COLUMN - len(head)) // 8))
    line = head + "\t" * pad + value
    return line + (" " + comment if comment else "")


def generate():
    src_path = os.path.join(ROOT, SOURCE)
    with open(src_path) as f:
        text = f.read()
    lines = logical_lines(text)
    object_like = []
    for _, joined in lines:
        m = DEFINE.match(joined)
        if m and not m.group(2) and split_comment(m.group(3))[0]:
            object_like.append(m.group(1))
    m = re.search(r"^#\s*ifndef\s+(\w+)\s*\n#\s*define\s+\1\s*$", text,
                  re.M)
    if not m:
        sys.exit(f"gen-kernel-regs: no include guard in {SOURCE}")
    guard = m.group(1)
    names = [n for n in object_like if n != guard]
    values = evaluate(src_path, names)
    extra = fields(values)
    after = {}
    for field, (bits, last) in extra.items():
        after.setdefault(last, []).append((field, bits))

    out = []
    first_comment_done = False
    for group, joined in lines:
        m = DEFINE.match(joined)
        if re.fullmatch(rf"#\s*ifndef\s+{guard}\s*", joined):
            out += [f"#ifndef {GUARD}", f"#define {GUARD}", "",
                    "#include <linux/bits.h>", "",
                    "/* Registers are 32-bit: masks are u32, as the values "
                    "read from them. */",
                    "#ifndef GENMASK_U32",
                    "#define GENMASK_U32(h, l)\t((u32)GENMASK(h, l))",
                    "#endif"]
            continue
        if m and m.group(1) == guard:
            continue
        if joined.startswith("#endif") and guard in joined:
            out.append(f"#endif /* {GUARD} */")
            continue
        if not first_comment_done and joined.startswith("/*") and \
                "SPDX" not in joined:
            first_comment_done = True
            out.append(group[0])
            out += [" * Generated by scripts/gen-kernel-regs.py from QEMU's",
                    f" * {SOURCE}: do not edit, regenerate.", " *"]
            out += group[1:]
            continue
        if not m:
            out += group
            continue
        name, params = m.group(1), m.group(2)
        expr, comment = split_comment(m.group(3))
        if params and len(group) == 1:
            out.append(define(name + params, expr, comment))
        elif params:
            # C for both: the source's lines, continued with a tab.
            first = DEFINE.match(group[0])
            out.append(f"#define {name}{params} {first.group(3).strip()}")
            out += ["\t" + g.strip() for g in group[1:]]
        elif len(group) > 1 and \
                kernel_value(name, expr, values.get(name)) == expr:
            # An expression over several lines keeps them.
            out.append(f"#define {name} \\")
            out += ["\t" + g.strip() for g in group[1:]]
        else:
            out.append(define(name, kernel_value(name, expr,
                                                 values.get(name)), comment))
        for field, (high, low) in after.get(name, []):
            out.append(define(field, f"GENMASK_U32({high}, {low})"))
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--output", default=os.path.join(ROOT, OUTPUT))
    ap.add_argument("--check", action="store_true",
                    help="exit 1 if OUTPUT is not up to date")
    args = ap.parse_args()
    text = generate()
    try:
        with open(args.output) as f:
            old = f.read()
    except FileNotFoundError:
        old = None
    if args.check:
        if old != text:
            sys.stdout.writelines(difflib.unified_diff(
                (old or "").splitlines(keepends=True),
                text.splitlines(keepends=True), args.output, "generated"))
            return 1
        return 0
    if old != text:
        with open(args.output, "w") as f:
            f.write(text)
        print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
