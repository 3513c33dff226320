#!/usr/bin/python3
"""Print the guest driver as a Linux patch series, drivers/gpu/drm/pvdc/.

    kernel-series.py TREE -o DIR

TREE is a pristine Linux source tree (Debian's linux-source-6.12); DIR
receives 0000-cover-letter.patch and one numbered .patch per step of
SERIES, for "git am" in that order (tests/build/test_kernel_series.py
does).

The driver's files are guest-driver/'s, the ones DKMS builds out of tree,
with three changes a kernel tree needs: the object list of guest-driver/
Kbuild becomes a Makefile that builds pvdc.o for CONFIG_DRM_PVDC (from
guest-driver/Kconfig); the register header loses the note that
scripts/gen-kernel-regs.py generated it (in the kernel it is the driver's
header, which a change to QEMU's register map updates in a patch of its
own) and the fallback for kernels without GENMASK_U32(); the lines for
Linux's own files (drivers/gpu/drm/Kconfig and Makefile, MAINTAINERS, the
documentation's table of contents) are kept below as the fragments
upstream would receive.  The cover letter is docs/series/linux.txt.
"""

import argparse
import glob
import importlib.util
import os
import re
import subprocess
import sys

from pvdc_paths import ROOT

_spec = importlib.util.spec_from_file_location(
    "graft_qemu", os.path.join(ROOT, "scripts", "graft-qemu.py"))
graft = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(graft)
Fragment = graft.Fragment

DRIVER = "guest-driver"
TARGET = "drivers/gpu/drm/pvdc"
COVER = "docs/series/linux.txt"


class Step:
    """One patch: (repository file, file in Linux) pairs it adds, with
    guest-driver/'s globs mapped to the driver's directory, and the
    fragments it inserts into Linux's files."""

    def __init__(self, subject, body, copied=(), fragments=()):
        self.subject, self.body = subject, body
        self.copied, self.fragments = list(copied), list(fragments)


SERIES = [
    Step("drm/pvdc: Add a driver for QEMU's paravirtual display controller",
         "pvdc is a display controller that QEMU emulates for virtual\n"
         "machines: several heads, each with a primary, an\n"
         "overlay and a cursor plane that scan out of guest pages bound into\n"
         "the device, a shared scaler pool and bandwidth budget, and\n"
         "shadow, armed and active register copies that the device latches\n"
         "at each head's vertical blank, all of a commit or none of it.\n\n"
         "The driver maps that onto the atomic helpers: atomic_check asks\n"
         "the device's own rules (limits read from its capability\n"
         "registers), a commit is written to the shadow registers and armed\n"
         "with one doorbell, and its events are sent from the commit and\n"
         "vblank interrupts.  Buffers are GEM shmem objects, bound into the\n"
         "device once each; dma-bufs of other devices are imported the same\n"
         "way.  Per head: gamma and degamma LUTs and a CTM, CRCs through the\n"
         "debugfs CRC interface, and a writeback connector; EDID and hotplug\n"
         "per connector; the vblank counter and timestamps follow the\n"
         "device's clock.\n\n"
         "The register header is the kernel's spelling of QEMU's\n"
         "include/hw/display/pvdc-regs.h, where docs/specs/pvdc.rst\n"
         "specifies the behaviour behind each register.",
         copied=[("guest-driver/Kconfig", "Kconfig"),
                 ("guest-driver/Kbuild", "Makefile"),
                 ("guest-driver/pvdc_*.c", None),
                 ("guest-driver/pvdc_drv.h", None),
                 ("guest-driver/pvdc_trace.h", None),
                 ("guest-driver/pvdc-regs.h", None)],
         fragments=[Fragment("drivers/gpu/drm/Kconfig",
                             text='source "drivers/gpu/drm/pvdc/Kconfig"\n\n',
                             anchor='source "drivers/gpu/drm/vkms/Kconfig"'),
                    Fragment("drivers/gpu/drm/Makefile",
                             text="obj-$(CONFIG_DRM_PVDC)\t+= pvdc/\n",
                             anchor="obj-$(CONFIG_DRM_VKMS)"),
                    # Between "DRM DRIVER FOR QEMU'S CIRRUS DEVICE" and QXL.
                    Fragment("MAINTAINERS", text=None,
                             anchor="DRM DRIVER FOR QXL VIRTUAL GPU\n")]),
    Step("drm/pvdc: Add documentation",
         "What the driver exposes (heads, planes, properties, writeback,\n"
         "CRCs), what it needs from the host, and how to try it with QEMU.",
         copied=[("guest-driver/Documentation/pvdc.rst",
                  "Documentation/gpu/pvdc.rst")],
         fragments=[Fragment("Documentation/gpu/drivers.rst",
                             text="   pvdc\n", anchor="   vkms\n"),
                    Fragment("MAINTAINERS",
                             text="F:\tDocumentation/gpu/pvdc.rst\n",
                             anchor=f"F:\t{TARGET}/\n")]),
]


def maintainers_entry():
    return ("DRM DRIVER FOR QEMU'S PVDC DISPLAY CONTROLLER\n"
            f"M:\t{graft.identity()}\n"
            "L:\tdri-devel@lists.freedesktop.org\n"
            "S:\tMaintained\n"
            "T:\tgit https://gitlab.freedesktop.org/drm/misc/kernel.git\n"
            f"F:\t{TARGET}/\n\n")


def replace_once(pattern, repl, text, flags=0, missing=""):
    """TEXT with the one match of PATTERN replaced; exit with MISSING if
    there is not exactly one: the repository file changed under us."""
    out, n = re.subn(pattern, repl, text, flags=flags)
    if n != 1:
        sys.exit(f"kernel-series: {missing}")
    return out


def kernel_header(text, tree):
    """guest-driver/pvdc-regs.h as the driver's own header in TREE."""
    out = replace_once(r" \* Generated by scripts/gen-kernel-regs\.py from "
                       r"QEMU's\n \* [^\n]*: do not edit, regenerate\.\n"
                       r" \*\n", "", text,
                       missing="no generator note in guest-driver/"
                       "pvdc-regs.h (scripts/gen-kernel-regs.py changed?)")
    # QEMU's words about its own tree: in the kernel, where the map comes
    # from and where its behaviour is specified.
    out = replace_once(r" \* The single source of truth [^\n]*\n"
                       r"(?: \*[^\n]+\n)* \*\n"
                       r" \* The behaviour behind every register is "
                       r"specified in docs/specs/pvdc\.rst\.\n",
                       " * The register map of QEMU's pvdc device, as QEMU's\n"
                       " * include/hw/display/pvdc-regs.h defines it; QEMU's\n"
                       " * docs/specs/pvdc.rst specifies the behaviour behind "
                       "every register.\n", out,
                       missing="the first paragraphs of QEMU's "
                       "include/hw/display/pvdc-regs.h changed: update "
                       "kernel_header() in scripts/kernel-series.py")
    with open(os.path.join(tree, "include", "linux", "bits.h")) as f:
        has_u32 = re.search(r"^#define GENMASK_U32\(", f.read(), re.M)
    if has_u32:
        out = replace_once(r"\n/\* Registers are 32-bit[^\n]*\*/\n"
                           r"#ifndef GENMASK_U32\n#define GENMASK_U32[^\n]*\n"
                           r"#endif\n", "", out,
                           missing="no GENMASK_U32 fallback in "
                           "guest-driver/pvdc-regs.h")
    return out


def kernel_makefile(text):
    """guest-driver/Kbuild's object list, built for CONFIG_DRM_PVDC."""
    return replace_once(r"^obj-m \+= pvdc\.o$",
                        "obj-$(CONFIG_DRM_PVDC) += pvdc.o", text,
                        flags=re.M,
                        missing="no 'obj-m += pvdc.o' in guest-driver/Kbuild")


def step_files(tree):
    """[(step, [(Linux path, content)])]: each repository file in its
    first step."""
    seen, out = set(), []
    for step in SERIES:
        files = []
        for pattern, target in step.copied:
            matches = sorted(glob.glob(os.path.join(ROOT, pattern)))
            if not matches:
                sys.exit(f"kernel-series: {pattern} matches no file")
            for src in matches:
                rel = os.path.relpath(src, ROOT)
                if rel in seen:
                    continue
                seen.add(rel)
                name = target or os.path.basename(rel)
                dst = name if "/" in name else f"{TARGET}/{name}"
                with open(src) as f:
                    text = f.read()
                if rel == "guest-driver/pvdc-regs.h":
                    text = kernel_header(text, tree)
                elif rel == "guest-driver/Kbuild":
                    text = kernel_makefile(text)
                files.append((dst, text))
        out.append((step, files))
    # Every source DKMS builds is in the series: the objects Kbuild names
    # and the headers (not what a build left beside them, pvdc.mod.c).
    with open(os.path.join(ROOT, DRIVER, "Kbuild")) as f:
        objects = re.findall(r"\b(\w+)\.o\b",
                             re.search(r"^pvdc-y\s*:=((?:.*\\\n)*.*)$",
                                       f.read(), re.M).group(1))
    built = {f"{DRIVER}/{o}.c" for o in objects} | \
        {os.path.relpath(p, ROOT) for p in
         glob.glob(os.path.join(ROOT, DRIVER, "*.h"))}
    if built - seen:
        sys.exit("kernel-series: in no step: " + " ".join(sorted(built - seen)))
    return out


def diffstat(diff):
    """git format-patch's summary of DIFF, from git itself: checkpatch
    reads it (a patch that touches MAINTAINERS says so there).  Run at the
    top of the repository: in a subdirectory of a git checkout (meson's
    build directory), git apply leaves out every path outside it."""
    p = subprocess.run(["git", "apply", "--stat", "--summary", "-"],
                       input="".join(diff), capture_output=True, text=True,
                       cwd=ROOT)
    if p.returncode:
        sys.exit(f"kernel-series: git apply --stat: {p.stderr}")
    return p.stdout + "\n"


def mail(n, total, subject, body, diff, who, date):
    return (f"From 0000000000000000000000000000000000000000 "
            f"Mon Sep 17 00:00:00 2001\n"
            f"From: {who}\nDate: {date}\n"
            f"Subject: [PATCH {n}/{total}] {subject}\n\n"
            f"{body}---\n" + diffstat(diff) + "".join(diff))


def series(tree):
    """The patches, as [(file name, mbox text)], cover letter first."""
    state = {}

    def current(path):
        if path not in state:
            with open(os.path.join(tree, path)) as f:
                state[path] = f.read()
        return state[path]

    who, date = graft.identity(), graft.commit_date()
    steps = step_files(tree)
    total = len(steps)
    patches = []
    for n, (step, files) in enumerate(steps, 1):
        diff = []
        for dst, text in files:
            if os.path.exists(os.path.join(tree, dst)):
                sys.exit(f"kernel-series: {dst} already exists in {tree}")
            diff += graft.file_diff(dst, None, text)
        for frag in step.fragments:
            if frag.qemu_file == "MAINTAINERS" and frag.text is None:
                frag = Fragment(frag.qemu_file, text=maintainers_entry(),
                                anchor=frag.anchor)
            old = current(frag.qemu_file)
            state[frag.qemu_file] = graft.splice(old, frag, marked=False)
            diff += graft.file_diff(frag.qemu_file, old,
                                    state[frag.qemu_file])
        body = step.body + "\n\n" + f"Signed-off-by: {who}\n"
        slug = re.sub(r"[^A-Za-z0-9]+", "-", step.subject).strip("-")
        patches.append((f"{n:04d}-{slug[:52]}.patch",
                        mail(n, total, step.subject, body, diff, who, date)))
    return [graft.cover_letter(COVER, [s.subject for s, _ in steps], who,
                               date)] + patches


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tree", help="pristine Linux source tree")
    ap.add_argument("-o", "--output-directory", metavar="DIR", required=True,
                    help="write the cover letter and one .patch file per "
                         "step to DIR")
    args = ap.parse_args()
    os.makedirs(args.output_directory, exist_ok=True)
    for name, text in series(args.tree):
        with open(os.path.join(args.output_directory, name), "w") as f:
            f.write(text)
        print(os.path.join(args.output_directory, name))


if __name__ == "__main__":
    main()
