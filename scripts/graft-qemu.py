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

A file added by one step may hold lines that belong to a later one (the
hook of a later concern in a core file): series markers, whole-line
comments that open and close such a block,

    /* pvdc series: boot */          # pvdc series: boot
    ...                              ...
    /* pvdc series: end boot */      # pvdc series: end boot

(inside a block comment: " * pvdc series: boot"),
name the step (Step.name) whose patch adds the lines.  The patches before
it leave the block out, that step's adds it; the marker lines themselves
are in no patch and in no graft.  An unknown step, a block that is not
closed, or one of a step not after the file's own, stops the graft.
"""

import argparse
import email.utils
import glob
import os
import re
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

    def lines(self, upto=None):
        """The text after step UPTO (the last by default: see at_step());
        with PART, the PART-th paragraph of SOURCE (blocks separated by an
        empty line, which goes with the block after it: the first part
        alone ends the file without one), so that steps can take one QEMU
        file's lines in turn."""
        if self.source is None:
            return self.text
        with open(os.path.join(ROOT, self.source)) as f:
            text = f.read()
        if self.part is not None:
            parts = re.split(r"(?<=\n)(?=\n\S)", text)
            if self.part >= len(parts):
                sys.exit(f"graft: {self.source} has no paragraph "
                         f"{self.part}")
            text = parts[self.part]
        first = next(n for n, step in enumerate(SERIES)
                     if self in step.fragments)
        return at_step(text, len(SERIES) - 1 if upto is None else upto,
                       self.source, first)


class Step:
    """One patch of the series: the files it adds (glob patterns relative
    to the repository root; a file belongs to the first step that names
    it) and the fragments it inserts.  NAME is what series markers call
    it."""

    def __init__(self, name, subject, body, copied=(), fragments=()):
        self.name, self.subject, self.body = name, subject, body
        self.copied, self.fragments = list(copied), list(fragments)


# The device's files are named one by one: a file renamed, added or
# removed in hw/display/ or include/hw/display/ stops the series with a
# message (step_files()) until it is given its step here.
SERIES = [
    Step("regs", "hw/display: add the pvdc register map and its specification",
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
    Step("compose", "hw/display: add the pvdc composition engine",
         "How pvdc turns a head's planes into the picture it shows: pixel\n"
         "formats converted to and from the device's, scaling, blending,\n"
         "the colour pipeline (LUTs and matrix) and the frame CRC, on\n"
         "pixman images, with no device state.  It has no caller yet: the\n"
         "device of the next patch checks pixel formats against its table,\n"
         "its consoles compose each head through it.  Built with\n"
         "CONFIG_PVDC, which the next patch gives its device.",
         copied=["hw/display/pvdc-compose.c", "hw/display/pvdc-compose.h",
                 "hw/display/pvdc-compose-internal.h",
                 "hw/display/pvdc-compose-color.c",
                 "hw/display/pvdc-compose-convert.c",
                 "hw/display/pvdc-fields.h"],
         fragments=[Fragment("hw/display/meson.build",
                             "hw/display/meson.build", part=0),
                    Fragment("hw/display/Kconfig", "hw/display/Kconfig")]),
    Step("device", "hw/display: add the pvdc device: commits, latch, vblanks",
         "The core of the device model as docs/specs/pvdc.rst specifies\n"
         "it: the PCI device with its register file (BAR 0) and VRAM (BAR 2),\n"
         "reset and migration; shadow, armed and active registers, the\n"
         "commit rules (which take the pixel formats of the engine of the\n"
         "previous patch) and the latch that applies a group's commit all or\n"
         "nothing at its vblank; vblank timelines, the timer and the\n"
         "interrupts from the virtual clock.  Its heads latch and interrupt\n"
         "but show nothing: the next patch gives them consoles (and the\n"
         "host-cursor property).  Planes are in VRAM: a later patch adds\n"
         "guest memory.  It is built when CONFIG_PVDC is set (by default\n"
         "with PCI_DEVICES).\n\n"
         "The registers of the concerns the next patches add are not\n"
         "handled yet: LUT_SIZE, the BIND and DAMAGE registers, the\n"
         "connectors' PREFERRED and SUGGESTED_POS and the EDID window, and\n"
         "the CRC registers read as zero and are logged as unknown\n"
         "(LOG_GUEST_ERROR), FEATURES has no BOOT_DISPLAY, the colour\n"
         "stages are latched but not applied, and a commit's writeback\n"
         "target is checked by the rules but not written.\n\n"
         "With the qtest library and the tests of vblanks, interrupts, heads\n"
         "and routing, and of the commit rules (those of the colour stages\n"
         "come with them).",
         copied=["hw/display/pvdc.c", "hw/display/pvdc.h",
                 "hw/display/pvdc-internal.h", "hw/display/pvdc-mmio.c",
                 "hw/display/pvdc-rules.c",
                 "hw/display/pvdc-latch.c", "hw/display/pvdc-timing.c",
                 "tests/qtest/pvdc-qtest.c", "tests/qtest/pvdc-qtest.h",
                 "tests/qtest/pvdc-vblank-test.c",
                 "tests/qtest/pvdc-heads-test.c",
                 "tests/qtest/pvdc-rules-test.c"],
         fragments=[Fragment("hw/display/meson.build",
                             "hw/display/meson.build", part=1),
                    Fragment("hw/display/trace-events",
                             "hw/display/trace-events"),
                    Fragment("tests/qtest/meson.build",
                             "tests/qtest/meson.build",
                             # After the per-target lists, the extra sources
                             # and the slow tests are defined.
                             anchor="qtest_executables = {}")]),
    Step("console", "hw/display/pvdc: one QEMU console per connector",
         "Each connector a QEMU console that shows the active state of the\n"
         "head that drives it, composed with the engine or shown straight\n"
         "from VRAM (a head that shows exactly one framebuffer), and only\n"
         "when something changed: the head, its active state or the VRAM\n"
         "under a visible plane (dirty logging).  The UIs' refresh finds\n"
         "what the guest drew without a commit; a latch pushes the frame at\n"
         "once from a bottom half, at most one push pending per console.\n"
         "The host-cursor property hands the cursor plane to the UI.\n\n"
         "With the compose qtest library (scenes, and the reference composer\n"
         "the consoles' pictures are compared with) and the tests of what\n"
         "reaches the consoles: dirty tracking, direct scan-out, the host\n"
         "cursor, routing and pushes.",
         copied=["hw/display/pvdc-console.c",
                 "tests/qtest/pvdc-qtest-compose.c",
                 "tests/qtest/pvdc-qtest-compose.h",
                 "tests/qtest/pvdc-color-ref.h",
                 "tests/qtest/pvdc-console-test.c"]),
    Step("capture", "hw/display/pvdc: frame CRCs, writeback and their budget",
         "CRC capture (CRC_CTRL, CRC_VALUE, CRC_FRAME): the CRC of each\n"
         "frame a head shows, composed when the guest reads it; writeback:\n"
         "the frame of a commit that asks for it composed into its target\n"
         "at the latch point.  Both compose within one budget of pixels per\n"
         "second of virtual time, so that a guest cannot make the host\n"
         "compose without bound; a commit that writes back over budget\n"
         "latches later, never dropped.  Writeback targets are in VRAM:\n"
         "the patch that adds guest memory adds targets in it.\n\n"
         "Until this patch CRC_CTRL, CRC_VALUE and CRC_FRAME read as zero\n"
         "and are logged as unknown, and a commit's writeback target is\n"
         "checked by the rules but not written.\n\n"
         "With the tests that follow frames by their CRC: commits and their\n"
         "latch, composition checked pixel by pixel against the reference\n"
         "composer; the consoles' test checks that CRCs have the cursor the\n"
         "UI draws.",
         copied=["hw/display/pvdc-capture.c",
                 "tests/qtest/pvdc-commit-test.c",
                 "tests/qtest/pvdc-compose-test.c"]),
    Step("boot", "hw/display/pvdc: a boot display on head 0 (ramfb)",
         "Until a head is enabled, head 0 shows a ramfb companion that the\n"
         "firmware draws into, so that firmware menus, boot loaders and\n"
         "installers are seen before the guest's driver takes over\n"
         "(FEATURES.BOOT_DISPLAY, the ramfb property).  Its state migrates\n"
         "in the pvdc/boot subsection while it is shown.  With its qtest.",
         copied=["hw/display/pvdc-boot.c", "tests/qtest/pvdc-boot-test.c"]),
    Step("outputs", "hw/display/pvdc: EDID, preferred modes and hotplug",
         "The connectors as the host describes them: a preferred mode and\n"
         "a suggested position per connector, from the xres/yres and\n"
         "headN-* properties or from the UI's window size (ui_info), an\n"
         "EDID generated from them (the EDID window), and a hotplug\n"
         "interrupt when they change.  They migrate in the pvdc/output\n"
         "subsection, with the last CRC captured.\n\n"
         "Until this patch PREFERRED, SUGGESTED_POS and the EDID window\n"
         "read as zero and are logged as unknown.  With its qtest.",
         copied=["hw/display/pvdc-output.c",
                 "tests/qtest/pvdc-output-test.c"]),
    Step("color", "hw/display/pvdc: the colour pipeline, LUTs and CTM",
         "The degamma LUT, colour matrix and gamma LUT of each head, as the\n"
         "DRM colour management properties have them: a doorbell copies the\n"
         "tables its armed state enables and derives the pipeline the\n"
         "composition engine applies, the latch point makes it the active\n"
         "one (a page flip with the same tables shares it, derives nothing),\n"
         "and the consoles compose again what it changes.  The commit rules\n"
         "check the tables' sizes and places (PVDC_ERR_COLOR); the copies\n"
         "migrate in the pvdc/colors subsection, from which the destination\n"
         "derives the pipeline again, after checking them against the head\n"
         "registers.\n\n"
         "Until this patch LUT_SIZE reads as zero and is logged as unknown,\n"
         "and the colour stages' HS_CTRL bits and table registers are\n"
         "latched but change no pixel.\n\n"
         "With the tests of the colour pipeline and of CRC capture and\n"
         "writeback (which write back after it too); the rules' test gets\n"
         "the cases of PVDC_ERR_COLOR.",
         copied=["hw/display/pvdc-color.c",
                 "tests/qtest/pvdc-color-test.c",
                 "tests/qtest/pvdc-capture-test.c"]),
    Step("memory", "hw/display/pvdc: scan out of guest memory bound into the device",
         "Guest pages bound into the device's address space above VRAM, so\n"
         "that planes, colour tables and writeback targets need not be\n"
         "copied into VRAM: the BIND block (BIND_ADDR, BIND_SIZE, the table\n"
         "of guest ranges, BIND_CMD and BIND_STATUS, BIND_SPACE) maps the\n"
         "pages of a table into one range of device addresses until UNBIND\n"
         "or reset; the commit rules accept a plane or a table wholly in one\n"
         "binding; a plane whose bytes are contiguous in the host is shown\n"
         "straight from them, any other is composed out of a view of its\n"
         "lines; the guest reports what it writes there (DAMAGE_ADDR,\n"
         "DAMAGE_LEN), as bindings have no dirty log.  A binding is checked\n"
         "again when the memory map changes (RAM unplugged under it), and\n"
         "nothing is read from one while bus mastering is off.  The\n"
         "bindings migrate in the pvdc/memory subsection; x-bind-space\n"
         "narrows the address space for tests.\n\n"
         "Until this patch the BIND and DAMAGE registers read as zero and\n"
         "are logged as unknown, and a commit whose planes or tables lie\n"
         "above VRAM is refused (PVDC_ERR_FB_BOUNDS, PVDC_ERR_COLOR,\n"
         "PVDC_ERR_WRITEBACK).\n\n"
         "With the qtest library of bindings and the tests of bindings,\n"
         "of planes, colour tables and writeback targets in them, and of\n"
         "RAM unplugged under them.",
         copied=["hw/display/pvdc-memory.c",
                 "tests/qtest/pvdc-qtest-memory.c",
                 "tests/qtest/pvdc-qtest-memory.h",
                 "tests/qtest/pvdc-memory-test.c",
                 "tests/qtest/pvdc-memory-scanout-test.c",
                 "tests/qtest/pvdc-memory-ram-test.c"]),
    Step("qtests", "tests/qtest: add pvdc's tests of the whole device",
         "Register-level tests of the device as a whole, which exercise\n"
         "every concern of the previous patches at once and so come after\n"
         "the last: its register file, a reference model driven by random\n"
         "commits, one test per class of bug that has hit QEMU's display\n"
         "devices, storms of interrupts, doorbells and host CPU work,\n"
         "migration streams valid and mutated, uptimes, reset and\n"
         "hot-unplug.  Also a generic-fuzz configuration for the register\n"
         "file.",
         copied=["tests/qtest/pvdc*.c", "tests/qtest/pvdc*.h"],
         fragments=[
                    # Inside predefined_configs[]: before the line that
                    # closes its first entry and opens the second.
                    Fragment("tests/qtest/fuzz/generic_fuzz_configs.h",
                             "tests/qtest/fuzz/pvdc-fuzz-config.h",
                             anchor="    },{")]),
    Step("guide", "docs/system: add the pvdc user guide",
         "How to configure pvdc's heads and planes, what a guest needs, and\n"
         "how to look at each head.",
         copied=["docs/system/devices/pvdc.rst"],
         fragments=[Fragment("docs/system/device-emulation.rst",
                             text="   devices/pvdc.rst\n",
                             anchor="   devices/virtio-pmem.rst",
                             marked=False)]),
    Step("maintainers", "MAINTAINERS: add pvdc", "",
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


# A series marker: the whole line, in C (in a comment of its own, or as a
# line of a block comment, " * pvdc series: boot") or in a language with #
# comments.
SERIES_MARKER = re.compile(r"^[ \t]*(?:/\*|\*|#)[ \t]*pvdc series: (end )?"
                           r"([\w-]+)[ \t]*(?:\*/)?[ \t]*$")


def step_index(name, where):
    for n, step in enumerate(SERIES):
        if step.name == name:
            return n
    sys.exit(f"graft: {where}: series marker of an unknown step {name!r}")


def at_step(text, upto, where, first=0):
    """TEXT (of the repository file WHERE, added by step FIRST) as it is
    after step UPTO (an index into SERIES): without the series blocks of
    the steps after UPTO, and without any marker line."""
    out, open_blocks = [], []     # [(step index, line number)]
    for number, line in enumerate(text.splitlines(keepends=True), 1):
        m = SERIES_MARKER.match(line)
        if not m:
            if "pvdc series:" in line:
                sys.exit(f"graft: {where}:{number}: not a series marker: "
                         f"{line.strip()}")
            if all(n <= upto for n, _ in open_blocks):
                out.append(line)
            continue
        n = step_index(m.group(2), f"{where}:{number}")
        if not m.group(1):
            if n <= first:
                sys.exit(f"graft: {where}:{number}: a block of step "
                         f"{m.group(2)!r}, which is not after the step "
                         f"that adds the file ({SERIES[first].name!r})")
            open_blocks.append((n, number))
        elif not open_blocks or open_blocks[-1][0] != n:
            sys.exit(f"graft: {where}:{number}: closes step "
                     f"{m.group(2)!r}, which is not the block open")
        else:
            open_blocks.pop()
    if open_blocks:
        n, number = open_blocks[-1]
        sys.exit(f"graft: {where}:{number}: the block of step "
                 f"{SERIES[n].name!r} is not closed")
    return "".join(out)


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


def splice(original, frag, marked, upto=None):
    """ORIGINAL with FRAG (as it is after step UPTO) inserted: between
    markers when MARKED (replacing an earlier graft), bare otherwise (for
    a patch, or an unmarked fragment whose text is there already)."""
    lines = original.splitlines(keepends=True)
    text = frag.lines(upto)
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


def copied_text(rel, first, upto):
    """Repository file REL, added by step FIRST, after step UPTO."""
    with open(os.path.join(ROOT, rel)) as f:
        return at_step(f.read(), upto, rel, first)


def graft(tree):
    check_fragments()
    changed = []
    last = len(SERIES) - 1
    copied = [(rel, n) for n, (_, files) in enumerate(step_files())
              for rel in files]
    for rel, n in copied + [(rel, last) for rel in BUILD_ONLY]:
        dst = os.path.join(tree, rel)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        if write_if_changed(dst, copied_text(rel, n, last)):
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


def tree_after(tree, upto, steps):
    """{file: text} of what the series changes in pristine TREE, as it
    is after step UPTO (None: a file not there yet).  A QEMU file takes
    the fragments of the steps so far, each as it is after UPTO."""
    texts = {}
    for n, (_, files) in enumerate(steps):
        for rel in files:
            texts[rel] = copied_text(rel, n, upto) if n <= upto else None
    for n, step in enumerate(SERIES):
        for frag in step.fragments:
            if frag.qemu_file not in texts:
                with open(os.path.join(tree, frag.qemu_file)) as f:
                    texts[frag.qemu_file] = f.read()
            if n <= upto and frag.lines(upto):
                texts[frag.qemu_file] = splice(texts[frag.qemu_file], frag,
                                               marked=False, upto=upto)
    return texts


def series(tree):
    """The patches, as [(file name, mbox text)], against pristine TREE;
    the cover letter (COVER) first.  Each patch is the difference between
    the trees after its step and after the one before."""
    check_fragments()
    who, date = identity(), commit_date()
    steps = step_files()
    for _, files in steps:
        for rel in files:
            if os.path.exists(os.path.join(tree, rel)):
                sys.exit(f"graft: {rel} already exists in {tree}")
    patches = []
    before = tree_after(tree, -1, steps)
    for n, (step, files) in enumerate(steps, 1):
        after = tree_after(tree, n - 1, steps)
        diff = []
        for rel in sorted(after):
            if after[rel] != before[rel]:
                diff += file_diff(rel, before[rel], after[rel])
        before = after
        if not diff:
            sys.exit(f"graft: step {step.name!r} changes nothing")
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
