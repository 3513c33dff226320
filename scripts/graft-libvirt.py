#!/usr/bin/python3
"""Graft the pvdc video model into a libvirt source tree.

The change libvirt would receive is kept in this repository as a patch
series, libvirt/NNNN-*.graft, one file per patch: a commit message, then
fragments, each the lines one place in one libvirt file gains.  A fragment
names its place by an anchor: a chain of line beginnings, each searched
from the line the previous one matched, and the fragment goes right before
or after the last one.  Blank lines at the end of a fragment only separate
it from the next; blank lines at its start are its own.  In the tree every fragment sits between marker
comments naming it, so grafting again replaces it in place.

The graft file format:

    Subject: conf: Introduce the 'pvdc' video model

    Free text: the commit message.

    #@ file src/conf/domain_conf.h
    #@ after typedef enum { >> VIR_DOMAIN_VIDEO_TYPE_RAMFB,
        VIR_DOMAIN_VIDEO_TYPE_PVDC,

The device's limits are written once, in QEMU's pvdc sources:
@PVDC_MAX_HEADS@-style names in a fragment are replaced by their values.

A file is only rewritten when its content changes, so that ninja recompiles
exactly what was touched.  With --diff, print the series as patches against
the pristine tree instead (what would be posted to libvirt).
"""

import argparse
import difflib
import glob
import os
import re
import sys

from pvdc_paths import ROOT

SERIES = os.path.join(ROOT, "libvirt")
DIRECTIVE = "#@ "


class Fragment:
    def __init__(self, patch, path, where, anchors, lines):
        self.patch = patch
        self.path = path
        self.where = where
        self.anchors = anchors
        self.lines = lines
        self.name = patch


def device_limits():
    """The values fragments may use, read from the device's sources."""
    def read(rel):
        with open(os.path.join(ROOT, rel)) as f:
            return f.read()

    units = {"KiB": 1, "MiB": 1024, "GiB": 1024 * 1024}

    def kib(text, name):
        m = re.search(rf"#define {name}\s+\((\d+) \* (\w+)\)", text)
        if not m:
            sys.exit(f"graft-libvirt: {name} not found")
        return int(m.group(1)) * units[m.group(2)]

    regs = read("include/hw/display/pvdc-regs.h")
    device = read("hw/display/pvdc.c")
    m = re.search(r"#define PVDC_MAX_HEADS\s+(\d+)", regs)
    width, height = (
        re.search(rf'DEFINE_PROP_UINT32\("max-{axis}", \w+, [\w.]+, '
                  r'(\d+)\)', device)
        for axis in ("width", "height"))
    if not m or not width or not height:
        sys.exit("graft-libvirt: PVDC_MAX_HEADS, max-width or max-height "
                 "not found")
    return {
        "PVDC_MAX_HEADS": m.group(1),
        "PVDC_MIN_VRAM_KIB": str(kib(device, "PVDC_MIN_VRAM_SIZE")),
        "PVDC_MAX_VRAM_KIB": str(kib(device, "PVDC_MAX_VRAM_SIZE")),
        "PVDC_DEFAULT_MAX_WIDTH": width.group(1),
        "PVDC_DEFAULT_MAX_HEIGHT": height.group(1),
    }


def parse_series():
    """[(patch name, commit message, [Fragment])] in series order."""
    limits = device_limits()

    def subst(line):
        return re.sub(r"@(PVDC_[A-Z_]+)@", lambda m: limits[m.group(1)], line)

    series = []
    for path in sorted(glob.glob(os.path.join(SERIES, "*.graft"))):
        patch = os.path.basename(path)[:-len(".graft")]
        with open(path) as f:
            text = f.read()
        head, sep, body = text.partition("\n" + DIRECTIVE)
        if not sep or not head.startswith("Subject: "):
            sys.exit(f"graft-libvirt: {path}: no Subject: or no fragment")
        fragments = []
        current = None
        target = None
        for line in (DIRECTIVE + body).splitlines(keepends=True):
            if line.startswith(DIRECTIVE):
                verb, _, arg = line[len(DIRECTIVE):].strip().partition(" ")
                if verb == "file":
                    target = arg
                    current = None
                elif verb in ("before", "after") and target:
                    current = Fragment(patch, target, verb,
                                       [a.strip() for a in arg.split(">>")],
                                       [])
                    current.name = f"{patch}#{len(fragments) + 1}"
                    fragments.append(current)
                else:
                    sys.exit(f"graft-libvirt: {path}: bad directive {line!r}")
            elif current is not None:
                current.lines.append(subst(line))
            elif line.strip():
                sys.exit(f"graft-libvirt: {path}: text outside a fragment: "
                         f"{line!r}")
        for frag in fragments:
            # Blank lines separate fragments in the graft file; a fragment
            # that needs one starts with it.
            while frag.lines and not frag.lines[-1].strip():
                frag.lines.pop()
        series.append((patch, subst(head.strip() + "\n"), fragments))
    return series


def markers(path, name):
    """Marker lines around a fragment, as comments of the file's language."""
    if path.endswith((".c", ".h")):
        return (f"/* pvdc graft begin {name} */\n",
                f"/* pvdc graft end {name} */\n")
    if path.endswith((".rng", ".xml")):
        return (f"<!-- pvdc graft begin {name} -->\n",
                f"<!-- pvdc graft end {name} -->\n")
    if path.endswith(".rst"):
        return (f".. pvdc graft begin {name}\n", f".. pvdc graft end {name}\n")
    return (f"# pvdc graft begin {name}\n", f"# pvdc graft end {name}\n")


MARKED = re.compile(r"^(/\* |<!-- |\.\. |# )pvdc graft (begin|end) ")


def strip_grafts(lines):
    """The lines without any grafted block: the pristine file."""
    out = []
    inside = False
    for line in lines:
        m = MARKED.match(line)
        if m:
            inside = m.group(2) == "begin"
            continue
        if not inside:
            out.append(line)
    return out


def insert(lines, frag, with_markers):
    """Insert one fragment; anchors are only looked for outside grafts."""
    grafted = set()
    inside = False
    for i, line in enumerate(lines):
        m = MARKED.match(line)
        if m:
            inside = m.group(2) == "begin"
        if m or inside:
            grafted.add(i)
    at = 0
    for n, anchor in enumerate(frag.anchors):
        start = at if n == 0 else at + 1
        for i in range(start, len(lines)):
            if i not in grafted and lines[i].strip().startswith(anchor):
                at = i
                break
        else:
            sys.exit(f"graft-libvirt: {frag.path}: anchor {anchor!r} of "
                     f"{frag.name} not found")
    if frag.where == "after":
        at += 1
        # After a grafted block that already follows the anchor.
        while at in grafted:
            at += 1
    block = list(frag.lines)
    if with_markers:
        begin, end = markers(frag.path, frag.name)
        block = [begin] + block + [end]
    return lines[:at] + block + lines[at:]


def apply(pristine, fragments, with_markers=True):
    lines = list(pristine)
    for frag in fragments:
        lines = insert(lines, frag, with_markers)
    return "".join(lines)


def by_file(fragments):
    files = {}
    for frag in fragments:
        files.setdefault(frag.path, []).append(frag)
    return files


def write_if_changed(path, text):
    with open(path) as f:
        if f.read() == text:
            return False
    with open(path, "w") as f:
        f.write(text)
    return True


def read_pristine(tree, rel):
    with open(os.path.join(tree, rel)) as f:
        return strip_grafts(f.read().splitlines(keepends=True))


def graft(tree):
    fragments = [f for _, _, frags in parse_series() for f in frags]
    changed = []
    for rel, frags in by_file(fragments).items():
        text = apply(read_pristine(tree, rel), frags)
        if write_if_changed(os.path.join(tree, rel), text):
            changed.append(rel)
    return changed


def diff(tree, out=sys.stdout):
    """The series as git-format-patch-like patches, each on the previous."""
    series = parse_series()
    applied = []
    total = len(series)
    for n, (patch, message, fragments) in enumerate(series, 1):
        subject, _, body = message.partition("\n")
        subject = subject[len("Subject: "):]
        out.write(f"From pvdc {patch}\nSubject: [PATCH {n}/{total}] "
                  f"{subject}\n{body}---\n")
        before = by_file(applied)
        applied += fragments
        after = by_file(applied)
        for rel in sorted(by_file(fragments)):
            pristine = read_pristine(tree, rel)
            old = apply(pristine, before.get(rel, []), False)
            new = apply(pristine, after[rel], False)
            out.writelines(difflib.unified_diff(
                old.splitlines(keepends=True), new.splitlines(keepends=True),
                "a/" + rel, "b/" + rel))
        out.write("-- \n\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tree", help="libvirt source tree")
    ap.add_argument("--diff", action="store_true",
                    help="print the series as patches against a pristine tree")
    args = ap.parse_args()
    if args.diff:
        diff(args.tree)
        return
    changed = graft(args.tree)
    for rel in changed:
        print(f"  grafted {rel}")
    print(f"  {len(changed)} file(s) changed in the libvirt tree")


if __name__ == "__main__":
    main()
