#!/usr/bin/python3
"""Graft pvdc into a QEMU source tree.

The device sources, the register header, the qtest and the docs are copied
into the tree; the integration lines (hw/display/meson.build, Kconfig and
trace-events, tests/qtest/meson.build) are kept in this repository as the
fragments upstream would receive and are inserted between marker lines.

A file is only rewritten when its content changes, so that ninja recompiles
exactly what was touched.  With --diff, print the whole graft as a unified
diff against the pristine tree instead (the patch to post upstream).
"""

import argparse
import difflib
import filecmp
import glob
import os
import shutil
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Files copied as they are: patterns relative to the repository root.
COPIED = [
    "hw/display/pvdc*.c",
    "hw/display/pvdc*.h",
    "include/hw/display/pvdc*.h",
    "tests/qtest/pvdc*.c",
    "tests/qtest/pvdc*.h",
    "docs/specs/pvdc.rst",
    "docs/system/devices/pvdc.rst",
    "configs/devices/x86_64-softmmu/pvdc.mak",
]

# (file in QEMU, fragment in this repository, anchor).  The fragment is
# inserted before the first line starting with the anchor, or appended at
# the end when the anchor is None.
FRAGMENTS = [
    ("hw/display/meson.build", "hw/display/meson.build", None),
    ("hw/display/Kconfig", "hw/display/Kconfig", None),
    ("hw/display/trace-events", "hw/display/trace-events", None),
    # After the per-target lists and the extra sources are defined.
    ("tests/qtest/meson.build", "tests/qtest/meson.build",
     "qtest_executables = {}"),
    # A generic-fuzz entry, inside predefined_configs[]: before the line
    # that closes its first entry and opens the second.
    ("tests/qtest/fuzz/generic_fuzz_configs.h",
     "tests/qtest/fuzz/pvdc-fuzz-config.h", "    },{"),
]

BEGIN = "# pvdc graft begin (scripts/graft-qemu.py)\n"
END = "# pvdc graft end\n"


def markers(qemu_file):
    """The marker lines around a fragment, as comments of that language."""
    if qemu_file.endswith((".c", ".h")):
        return ("/* " + BEGIN[2:-1] + " */\n", "/* " + END[2:-1] + " */\n")
    return BEGIN, END


def splice(original, fragment, anchor, qemu_file=""):
    begin, end = markers(qemu_file)
    lines = original.splitlines(keepends=True)
    if begin in lines:
        start = lines.index(begin)
        stop = lines.index(end, start)
        del lines[start:stop + 1]
    block = [begin] + fragment.splitlines(keepends=True) + [end]
    at = len(lines)
    if anchor is not None:
        for i, line in enumerate(lines):
            if line.startswith(anchor):
                at = i
                break
        else:
            sys.exit(f"graft: anchor {anchor!r} not found")
    if at == len(lines) and lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    return "".join(lines[:at] + block + lines[at:])


def write_if_changed(path, text):
    try:
        with open(path) as f:
            if f.read() == text:
                return False
    except FileNotFoundError:
        pass
    with open(path, "w") as f:
        f.write(text)
    return True


def copied_files():
    for pattern in COPIED:
        for src in sorted(glob.glob(os.path.join(ROOT, pattern))):
            yield os.path.relpath(src, ROOT)


def graft(tree):
    changed = []
    for rel in copied_files():
        src = os.path.join(ROOT, rel)
        dst = os.path.join(tree, rel)
        if os.path.exists(dst) and filecmp.cmp(src, dst, shallow=False):
            continue
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copyfile(src, dst)
        changed.append(rel)
    for qemu_file, frag, anchor in FRAGMENTS:
        dst = os.path.join(tree, qemu_file)
        with open(os.path.join(ROOT, frag)) as f:
            fragment = f.read()
        with open(dst) as f:
            text = splice(f.read(), fragment, anchor, qemu_file)
        if write_if_changed(dst, text):
            changed.append(qemu_file)
    return changed


def diff(tree):
    out = sys.stdout
    for rel in copied_files():
        with open(os.path.join(ROOT, rel)) as f:
            new = f.readlines()
        out.writelines(difflib.unified_diff([], new, "/dev/null", "b/" + rel))
    for qemu_file, frag, anchor in FRAGMENTS:
        with open(os.path.join(tree, qemu_file)) as f:
            old = f.read()
        with open(os.path.join(ROOT, frag)) as f:
            fragment = f.read()
        # The pristine file has no markers; the patch carries the bare lines.
        begin, end = markers(qemu_file)
        new = splice(old, fragment, anchor, qemu_file).replace(
            begin, "").replace(end, "")
        out.writelines(difflib.unified_diff(
            old.splitlines(keepends=True), new.splitlines(keepends=True),
            "a/" + qemu_file, "b/" + qemu_file))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tree", help="QEMU source tree")
    ap.add_argument("--diff", action="store_true",
                    help="print the graft as a patch against a pristine tree")
    args = ap.parse_args()
    if args.diff:
        diff(args.tree)
        return
    changed = graft(args.tree)
    for rel in changed:
        print(f"  grafted {rel}")
    print(f"  {len(changed)} file(s) changed in the QEMU tree")


if __name__ == "__main__":
    main()
