#!/usr/bin/python3
"""Graft pvdc into a QEMU source tree, or print it as a patch series.

    graft-qemu.py TREE                  graft into TREE (incremental)
    graft-qemu.py --diff TREE [-o DIR]  the series against pristine TREE

The device sources, the register header, the qtests and the docs are copied
into the tree; the lines that go into QEMU's own files (hw/display/
meson.build, Kconfig and trace-events, tests/qtest/meson.build, the
generic-fuzz configs, MAINTAINERS, the docs' tables of contents) are kept
in this repository as the fragments upstream would receive.

Grafting rewrites a file only when its content changes, so that ninja
recompiles exactly what was touched; a fragment sits between marker lines
so that the next graft replaces it.  With --diff, the same content comes
out as the patch series to post upstream (SERIES below, in order; each
patch builds on its own), in mbox form for "git am" on stdout, or as
numbered .patch files in DIR, after the cover letter (docs/series/qemu.txt,
which must name every patch) as 0000-cover-letter.patch.
"""

import argparse
import email.utils
import filecmp
import glob
import os
import re
import shutil
import subprocess
import sys
from difflib import unified_diff

from pvdc_paths import ROOT


class Fragment:
    """Lines for one of QEMU's files, inserted before the first line that
    starts with ANCHOR (that is exactly ANCHOR when it ends with a newline),
    or at the end without one.  The lines come from the repository file
    SOURCE, or are TEXT.  MARKED fragments sit between marker comments in a
    grafted tree; an unmarked one (a toctree entry, where a comment is not
    allowed) is inserted when its text is not in the file yet."""

    def __init__(self, qemu_file, source=None, text=None, anchor=None,
                 marked=True, part=None):
        self.qemu_file, self.source, self.text = qemu_file, source, text
        self.anchor, self.marked, self.part = anchor, marked, part

    def lines(self):
        """The text; with PART, the PART-th paragraph of SOURCE (blocks
        separated by an empty line, which goes with the block after it:
        the first part alone ends the file without one), so that steps
        can take one QEMU file's lines in turn."""
        if self.source is None:
            return self.text
        with open(os.path.join(ROOT, self.source)) as f:
            text = f.read()
        if self.part is None:
            return text
        parts = re.split(r"(?<=\n)(?=\n\S)", text)
        if self.part >= len(parts):
            sys.exit(f"graft: {self.source} has no paragraph {self.part}")
        return parts[self.part]


class Step:
    """One patch of the series: the files it adds (glob patterns relative
    to the repository root; a file belongs to the first step that names
    it) and the fragments it inserts."""

    def __init__(self, subject, body, copied=(), fragments=()):
        self.subject, self.body = subject, body
        self.copied, self.fragments = list(copied), list(fragments)


# The device's files are named one by one: a file renamed, added or
# removed in hw/display/ or include/hw/display/ stops the series with a
# message (step_files()) until it is given its step here.
SERIES = [
    Step("hw/display: add the pvdc register map and its specification",
         "pvdc is a paravirtual display controller with atomic commits: N\n"
         "heads with primary, overlay and cursor planes, a shared scaler pool\n"
         "and bandwidth budget, and shadow/armed/active registers latched at\n"
         "each head's vblank, all or nothing.\n\n"
         "This adds its register map, the one header shared by the device,\n"
         "its tests and guest drivers, and the specification of the\n"
         "behaviour behind every register.  The header is dual-licensed\n"
         "GPL-2.0-or-later OR MIT so that guest drivers under other licences\n"
         "can take their register definitions from it.",
         copied=["include/hw/display/pvdc-regs.h", "docs/specs/pvdc.rst"],
         fragments=[Fragment("docs/specs/index.rst", text="   pvdc\n",
                             anchor="   pvpanic", marked=False),
                    # The device's line in the table of PCI IDs, which
                    # is where QEMU assigns its own devices' IDs.
                    Fragment("docs/specs/pci-ids.rst",
                             text="1b36:0015\n  PCI paravirtual display "
                                  "controller (``-device pvdc``, :doc:`pvdc`)"
                                  "\n\n",
                             anchor="All these devices are documented",
                             marked=False)]),
    Step("hw/display: add the pvdc composition engine",
         "How pvdc turns a head's planes into the picture it shows: pixel\n"
         "formats converted to and from the device's, scaling, blending,\n"
         "the colour pipeline (LUTs and matrix) and the frame CRC, on\n"
         "pixman images, with no device state.  It has no caller yet: the\n"
         "device of the next patch composes each head through it.  Built\n"
         "with CONFIG_PVDC, which the next patch gives its device.",
         copied=["hw/display/pvdc-compose.c", "hw/display/pvdc-compose.h",
                 "hw/display/pvdc-compose-internal.h",
                 "hw/display/pvdc-compose-color.c",
                 "hw/display/pvdc-compose-convert.c",
                 "hw/display/pvdc-fields.h"],
         fragments=[Fragment("hw/display/meson.build",
                             "hw/display/meson.build", part=0),
                    Fragment("hw/display/Kconfig", "hw/display/Kconfig")]),
    Step("hw/display: add the pvdc paravirtual display controller",
         "The device model as docs/specs/pvdc.rst specifies it: one QEMU\n"
         "console per head composed with the engine of the previous patch,\n"
         "vblank and commit interrupts from the virtual clock, EDID and\n"
         "hotplug, frame CRCs, writeback, guest memory bindings, the boot\n"
         "display and migration.  It is built when CONFIG_PVDC is set (by\n"
         "default with PCI_DEVICES).",
         copied=["hw/display/pvdc.c", "hw/display/pvdc.h",
                 "hw/display/pvdc-internal.h", "hw/display/pvdc-mmio.c",
                 "hw/display/pvdc-rules.c", "hw/display/pvdc-color.c",
                 "hw/display/pvdc-latch.c", "hw/display/pvdc-timing.c",
                 "hw/display/pvdc-capture.c", "hw/display/pvdc-console.c",
                 "hw/display/pvdc-output.c", "hw/display/pvdc-memory.c",
                 "hw/display/pvdc-boot.c"],
         fragments=[Fragment("hw/display/meson.build",
                             "hw/display/meson.build", part=1),
                    Fragment("hw/display/trace-events",
                             "hw/display/trace-events")]),
    Step("tests/qtest: add pvdc tests",
         "Register-level tests of the atomic model, the composition checked\n"
         "pixel by pixel, and one test per class of bug that has hit QEMU's\n"
         "display devices; they need q35, so they run for x86_64.  Also a\n"
         "generic-fuzz configuration for the register file.",
         copied=["tests/qtest/pvdc*.c", "tests/qtest/pvdc*.h"],
         fragments=[Fragment("tests/qtest/meson.build",
                             "tests/qtest/meson.build",
                             # After the per-target lists, the extra sources
                             # and the slow tests are defined.
                             anchor="qtest_executables = {}"),
                    # Inside predefined_configs[]: before the line that
                    # closes its first entry and opens the second.
                    Fragment("tests/qtest/fuzz/generic_fuzz_configs.h",
                             "tests/qtest/fuzz/pvdc-fuzz-config.h",
                             anchor="    },{")]),
    Step("docs/system: add the pvdc user guide",
         "How to configure pvdc's heads and planes, what a guest needs, and\n"
         "how to look at each head.",
         copied=["docs/system/devices/pvdc.rst"],
         fragments=[Fragment("docs/system/device-emulation.rst",
                             text="   devices/pvdc.rst\n",
                             anchor="   devices/virtio-pmem.rst",
                             marked=False)]),
    Step("MAINTAINERS: add pvdc", "",
         fragments=[Fragment("MAINTAINERS", "MAINTAINERS",
                             anchor="virtio-gpu\n")]),
]

# Grafted for the project's sanitizer and fuzzing builds, which need few
# devices (scripts/build-qemu.sh --asan, --fuzz); never part of the series:
# upstream, like the project's main build, gets pvdc from its Kconfig
# default.
BUILD_ONLY = ["configs/devices/x86_64-softmmu/pvdc.mak"]

BEGIN = "# pvdc graft begin (scripts/graft-qemu.py)\n"
END = "# pvdc graft end\n"


def markers(frag):
    """The marker lines around a fragment, as comments of that language;
    a part of a source file names its number, for one file's parts to be
    told apart."""
    begin, end = BEGIN, END
    if frag.part is not None:
        begin = begin[:-1] + f" part {frag.part}\n"
        end = end[:-1] + f" part {frag.part}\n"
    if frag.qemu_file.endswith((".c", ".h")):
        return ("/* " + begin[2:-1] + " */\n", "/* " + end[2:-1] + " */\n")
    return begin, end


def anchor_index(lines, anchor, qemu_file):
    if anchor is None:
        return len(lines)
    for i, line in enumerate(lines):
        if line == anchor if anchor.endswith("\n") else line.startswith(anchor):
            return i
    sys.exit(f"graft: anchor {anchor!r} not found in {qemu_file}")


def splice(original, frag, marked):
    """ORIGINAL with FRAG inserted: between markers when MARKED (replacing
    an earlier graft), bare otherwise (for a patch, or an unmarked
    fragment whose text is there already)."""
    lines = original.splitlines(keepends=True)
    text = frag.lines()
    begin, end = markers(frag)
    at = None
    if frag.marked and frag.part is not None and BEGIN in lines:
        # The whole source, grafted before it was taken in parts.
        start = lines.index(BEGIN)
        del lines[start:lines.index(END, start) + 1]
    if frag.marked and begin in lines:
        # Replaced where it is: the parts of a file keep their order.
        at = lines.index(begin)
        del lines[at:lines.index(end, at) + 1]
    if not frag.marked and text in "".join(lines):
        return "".join(lines)
    block = text.splitlines(keepends=True)
    if marked and frag.marked:
        block = [begin] + block + [end]
    if at is None:
        at = anchor_index(lines, frag.anchor, frag.qemu_file)
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


def fragments():
    """Every fragment of the series, in order; one whose text is empty
    (a slot not filled yet) is left out."""
    return [f for step in SERIES for f in step.fragments if f.lines()]


def check_fragments():
    marked = [(f.qemu_file, f.part) for f in fragments() if f.marked]
    if len(marked) != len(set(marked)):
        sys.exit("graft: two marked fragments for the same QEMU file "
                 "(give each its part of the source)")


# The repository's files that go into QEMU: each must be in a step (or
# be a fragment's source, or BUILD_ONLY).
QEMU_SIDE = ["hw/display/pvdc*", "include/hw/display/pvdc*",
             "tests/qtest/pvdc*", "tests/qtest/fuzz/pvdc*",
             "docs/specs/pvdc*", "docs/system/devices/pvdc*"]


def step_files():
    """[(step, [repository files it adds])], each file in its first step.
    A pattern that matches nothing, or a file of QEMU_SIDE in no step,
    stops the series: SERIES is out of date."""
    seen, out, errors = set(), [], []
    for step in SERIES:
        files = []
        for pattern in step.copied:
            matches = sorted(glob.glob(os.path.join(ROOT, pattern)))
            if not matches:
                errors.append(f"{pattern} (step \"{step.subject}\") "
                              "matches no file")
            for src in matches:
                rel = os.path.relpath(src, ROOT)
                if rel not in seen:
                    seen.add(rel)
                    files.append(rel)
        out.append((step, files))
    sources = {f.source for step in SERIES for f in step.fragments}
    for pattern in QEMU_SIDE:
        for src in sorted(glob.glob(os.path.join(ROOT, pattern))):
            rel = os.path.relpath(src, ROOT)
            if os.path.isfile(src) and rel not in seen | sources and \
                    rel not in BUILD_ONLY:
                errors.append(f"{rel} is in no step")
    if errors:
        sys.exit("graft: SERIES in scripts/graft-qemu.py is out of date:\n  "
                 + "\n  ".join(errors))
    return out


def graft(tree):
    check_fragments()
    changed = []
    copied = [f for _, files in step_files() for f in files] + BUILD_ONLY
    for rel in copied:
        src = os.path.join(ROOT, rel)
        dst = os.path.join(tree, rel)
        if os.path.exists(dst) and filecmp.cmp(src, dst, shallow=False):
            continue
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copyfile(src, dst)
        changed.append(rel)
    texts = {}     # QEMU file -> its text with the fragments so far
    for frag in fragments():
        if frag.qemu_file not in texts:
            with open(os.path.join(tree, frag.qemu_file)) as f:
                texts[frag.qemu_file] = f.read()
        texts[frag.qemu_file] = splice(texts[frag.qemu_file], frag,
                                       marked=True)
    for qemu_file, text in texts.items():
        if write_if_changed(os.path.join(tree, qemu_file), text):
            changed.append(qemu_file)
    return changed


def file_diff(rel, old, new):
    """One file's change in git's format; OLD is None for a new file."""
    for name, text in ((rel, old), (rel, new)):
        if text and not text.endswith("\n"):
            sys.exit(f"graft: {name} does not end with a newline")
    head = [f"diff --git a/{rel} b/{rel}\n"]
    if old is None:
        head.append("new file mode 100644\n")
    body = list(unified_diff(
        (old or "").splitlines(keepends=True), new.splitlines(keepends=True),
        "/dev/null" if old is None else "a/" + rel, "b/" + rel))
    return head + body if body else []


def identity():
    """The sign-off: the first maintainer in the MAINTAINERS fragment."""
    with open(os.path.join(ROOT, "MAINTAINERS")) as f:
        m = re.search(r"^M:\s*(.+<[^>]+>)\s*$", f.read(), re.M)
    if not m:
        sys.exit("graft: no 'M:' line in MAINTAINERS")
    return m.group(1)


def commit_date():
    """The date of the checkout's last commit (stable between runs), or
    now outside a git checkout."""
    try:
        return subprocess.run(["git", "-C", ROOT, "log", "-1", "--format=%aD"],
                              capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return email.utils.formatdate()


COVER = "docs/series/qemu.txt"


def cover_letter(path, subjects, who, date):
    """Patch 0 of a series from the repository file PATH: its first line
    is the subject, the rest the letter, which must name every patch by
    its subject (SUBJECTS)."""
    with open(os.path.join(ROOT, path)) as f:
        title, _, body = f.read().partition("\n")
    missing = [s for s in subjects if s not in body]
    if missing:
        sys.exit(f"{path} does not name the patch(es): " +
                 "; ".join(missing))
    return ("0000-cover-letter.patch",
            f"From 0000000000000000000000000000000000000000 "
            f"Mon Sep 17 00:00:00 2001\nFrom: {who}\nDate: {date}\n"
            f"Subject: [PATCH 0/{len(subjects)}] {title}\n\n"
            f"{body.lstrip(chr(10))}")


def series(tree):
    """The patches, as [(file name, mbox text)], against pristine TREE;
    the cover letter (COVER) first."""
    state = {}     # QEMU file -> its text after the steps so far

    def current(qemu_file):
        if qemu_file not in state:
            with open(os.path.join(tree, qemu_file)) as f:
                state[qemu_file] = f.read()
        return state[qemu_file]

    check_fragments()
    who, date = identity(), commit_date()
    steps = step_files()
    patches = []
    for n, (step, files) in enumerate(steps, 1):
        diff = []
        for rel in files:
            if os.path.exists(os.path.join(tree, rel)):
                sys.exit(f"graft: {rel} already exists in {tree}")
            with open(os.path.join(ROOT, rel)) as f:
                diff += file_diff(rel, None, f.read())
        for frag in [f for f in step.fragments if f.lines()]:
            old = current(frag.qemu_file)
            state[frag.qemu_file] = splice(old, frag, marked=False)
            diff += file_diff(frag.qemu_file, old, state[frag.qemu_file])
        body = (step.body + "\n\n" if step.body else "") + \
            f"Signed-off-by: {who}\n"
        mail = (f"From 0000000000000000000000000000000000000000 "
                f"Mon Sep 17 00:00:00 2001\n"
                f"From: {who}\nDate: {date}\n"
                f"Subject: [PATCH {n}/{len(steps)}] {step.subject}\n\n"
                f"{body}---\n" + "".join(diff))
        slug = re.sub(r"[^A-Za-z0-9]+", "-", step.subject).strip("-")
        patches.append((f"{n:04d}-{slug[:52]}.patch", mail))
    return [cover_letter(COVER, [step.subject for step, _ in steps], who,
                         date)] + patches


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tree", help="QEMU source tree")
    ap.add_argument("--diff", action="store_true",
                    help="print the graft as a patch series against a "
                         "pristine tree")
    ap.add_argument("-o", "--output-directory", metavar="DIR",
                    help="with --diff: write one .patch file per step to "
                         "DIR instead of an mbox on stdout")
    args = ap.parse_args()
    if args.diff:
        patches = series(args.tree)
        if args.output_directory:
            os.makedirs(args.output_directory, exist_ok=True)
            for name, text in patches:
                with open(os.path.join(args.output_directory, name),
                          "w") as f:
                    f.write(text)
                print(os.path.join(args.output_directory, name))
        else:
            # For git am: without the cover letter, which has no diff.
            sys.stdout.write("\n".join(text for _, text in patches[1:]))
        return
    changed = graft(args.tree)
    for rel in changed:
        print(f"  grafted {rel}")
    print(f"  {len(changed)} file(s) changed in the QEMU tree")


if __name__ == "__main__":
    main()
