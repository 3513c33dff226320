#!/usr/bin/python3
"""The graft into QEMU is incremental, and the series adds up to it (TAP).

scripts/graft-qemu.py must rewrite only the files whose content changed, so
that QEMU's ninja recompiles just those; and the integration fragments must
be inserted once, at their anchors, whatever the number of grafts.  Its
series markers (a later step's lines in an earlier step's file) are in no
graft and no patch, each block comes with its step's patch, a marker that
is wrong stops it, and the series applied in turn gives the graft.
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "scripts"))
from pvdc_paths import ROOT  # noqa: E402
from pvdc_tap import Tap  # noqa: E402

QEMU_FILES = ["hw/display/meson.build", "hw/display/Kconfig",
              "hw/display/trace-events", "tests/qtest/meson.build",
              "tests/qtest/fuzz/generic_fuzz_configs.h",
              "docs/specs/index.rst", "docs/specs/pci-ids.rst",
              "docs/system/device-emulation.rst", "MAINTAINERS"]
# What each fake file holds: the anchor its fragment needs.
FAKE_CONTENT = {
    "tests/qtest/meson.build": "qtests_x86_64 = qtests_i386\n\n"
                               "qtests_alpha = []\n\n"
                               "qtests = {}\n\n"
                               "qtest_executables = {}\n",
    "docs/specs/index.rst": ".. toctree::\n\n   pci-ids\n   pvpanic\n",
    "docs/specs/pci-ids.rst": "1b36:0014\n  PCI RISC-V IOMMU device\n\n"
                              "All these devices are documented in "
                              ":doc:`index`.\n",
    "docs/system/device-emulation.rst":
        ".. toctree::\n\n   devices/virtio-gpu.rst\n"
        "   devices/virtio-pmem.rst\n",
    "MAINTAINERS": "ramfb\nM: A <a@b>\n\nvirtio-gpu\nS: Orphan\n",
    "tests/qtest/fuzz/generic_fuzz_configs.h":
        "const generic_fuzz_config predefined_configs[] = {\n"
        "    {\n        .name = \"a\",\n    },{\n        .name = \"b\",\n"
        "    }\n};\n",
}


def graft(tree, repo):
    out = subprocess.run([sys.executable, os.path.join(repo, "scripts",
                                                       "graft-qemu.py"), tree],
                         capture_output=True, text=True, check=True).stdout
    return sorted(l.split()[1] for l in out.splitlines()
                  if l.strip().startswith("grafted "))


def series(tree, repo, out):
    """(exit status, output, [patch files]) of graft-qemu.py --diff."""
    p = subprocess.run([sys.executable, os.path.join(repo, "scripts",
                                                     "graft-qemu.py"),
                        "--diff", tree, "-o", out],
                       capture_output=True, text=True)
    patches = sorted(os.path.join(out, f) for f in os.listdir(out)
                     if not f.startswith("0000-")) \
        if os.path.isdir(out) else []
    return p.returncode, p.stdout + p.stderr, patches


def grafted_files(tree):
    """{path: text} of TREE, without the graft's marker lines."""
    marker = re.compile(r"^(# |/\* )pvdc graft (begin|end)\b.*\n", re.M)
    files = {}
    for root, _, names in os.walk(tree):
        for name in names:
            path = os.path.join(root, name)
            with open(path) as f:
                files[os.path.relpath(path, tree)] = marker.sub("", f.read())
    return files


def replace_once(repo, rel, old, new):
    """Replace OLD by NEW in REPO's file REL; the file's text before."""
    path = os.path.join(repo, rel)
    with open(path) as f:
        text = f.read()
    with open(path, "w") as f:
        f.write(text.replace(old, new, 1))
    return text


def fake_qemu_tree(tmp):
    """The QEMU files the graft edits, with just the anchors it needs."""
    tree = os.path.join(tmp, "qemu")
    for rel in QEMU_FILES:
        os.makedirs(os.path.dirname(os.path.join(tree, rel)), exist_ok=True)
        with open(os.path.join(tree, rel), "w") as f:
            f.write(FAKE_CONTENT.get(rel, "# qemu\n"))
    return tree


def main():
    tap = Tap()

    def case(name, ok, why=""):
        tap.result(ok, name, why)

    with tempfile.TemporaryDirectory() as tmp:
        repo = os.path.join(tmp, "repo")
        shutil.copytree(ROOT, repo, ignore=shutil.ignore_patterns(
            "build", ".git", "*.o", "*.ko"))
        tree = fake_qemu_tree(tmp)

        first = graft(tree, repo)
        case("the first graft copies the device and inserts the fragments",
             "hw/display/pvdc.c" in first and
             all(f in first for f in QEMU_FILES), first)

        again = graft(tree, repo)
        case("grafting an unchanged repository rewrites nothing",
             again == [], again)

        path = os.path.join(repo, "hw/display/pvdc.c")
        with open(path, "a") as f:
            f.write("/* touched */\n")
        touched = graft(tree, repo)
        case("changing one device file rewrites exactly that file",
             touched == ["hw/display/pvdc.c"], touched)

        os.utime(os.path.join(repo, "hw/display/pvdc-mmio.c"))
        mtime_only = graft(tree, repo)
        case("a new timestamp without new content rewrites nothing",
             mtime_only == [], mtime_only)

        with open(os.path.join(tree, "hw/display/meson.build")) as f:
            text = f.read()
        # Two parts: the composition engine's files and the device's.
        begins = [line for line in text.splitlines()
                  if "pvdc graft begin" in line]
        case("each fragment is inserted once, each part of a file once",
             len(begins) == 2 == len(set(begins)), text)

        with open(os.path.join(tree, "tests/qtest/meson.build")) as f:
            text = f.read()
        case("the qtests are added for x86_64 only, after the lists, the "
             "extra sources and the slow tests are defined",
             text.index("qtests_x86_64 = qtests_i386") <
             text.index("qtests = {}") < text.index("pvdc-regs-test") <
             text.index("qtests_x86_64 += ") <
             text.index("qtest_executables = {}"),
             text)

        with open(os.path.join(tree, "docs/specs/index.rst")) as f:
            text = f.read()
        case("a toctree entry is inserted once, unmarked, before its anchor",
             text.count("   pvdc\n") == 1 and "graft" not in text and
             text.index("   pvdc\n") < text.index("   pvpanic"), text)

        grafted = grafted_files(tree)
        left = [rel for rel, text in grafted.items()
                if "pvdc series:" in text]
        case("no series marker is left in the graft", not left, left)

        # The repository unchanged again: without "/* touched */".
        with open(path) as f:
            touched_text = f.read()
        with open(path, "w") as f:
            f.write(touched_text.replace("/* touched */\n", ""))
        # The series against a pristine tree, applied in turn to a copy.
        pristine = fake_qemu_tree(os.path.join(tmp, "pristine"))
        rc, out, patches = series(pristine, repo, os.path.join(tmp, "p"))
        text = "".join(open(p).read() for p in patches)
        applied = os.path.join(tmp, "applied")
        shutil.copytree(pristine, applied)
        for p in patches:
            a = subprocess.run(["git", "apply", "--unsafe-paths", p],
                               cwd=applied, capture_output=True, text=True)
            out += a.stdout + a.stderr
            rc |= a.returncode
        fresh = fake_qemu_tree(os.path.join(tmp, "fresh"))
        graft(fresh, repo)
        # Less what the graft adds for the project's own builds only.
        build_only = os.path.join("configs", "devices")
        differ = sorted((rel, text) for rel, text in
                        set(grafted_files(fresh).items()) ^
                        set(grafted_files(applied).items())
                        if not rel.startswith(build_only))
        case("the series applied in turn is the graft, without a marker",
             rc == 0 and len(patches) >= 8 and not differ and
             "pvdc series:" not in text,
             out + " ".join(sorted({rel for rel, _ in differ})))

        # A block of a later step: in its step's patch, in none before.
        block = [p for p in patches if "boot-display-on-head-0" in p]
        before = [p for p in patches if p < block[0]] if block else []
        case("a series block comes with its step's patch, not before it",
             block and "+    if (!pvdc_boot_realize(s, errp)) {" in
             open(block[0]).read() and
             not any("pvdc_boot_realize" in open(p).read()
                     for p in before),
             " ".join(os.path.basename(p) for p in patches))

        for why, old, new in [
                ("a marker of an unknown step",
                 "    pvdc_boot_reset(s);\n",
                 "    /* pvdc series: nosuchstep */\n"
                 "    pvdc_boot_reset(s);\n"
                 "    /* pvdc series: end nosuchstep */\n"),
                ("a block that is not closed",
                 "    pvdc_boot_reset(s);\n",
                 "    /* pvdc series: outputs */\n"
                 "    pvdc_boot_reset(s);\n"),
                ("a block of a step not after the file's own",
                 "    pvdc_boot_reset(s);\n",
                 "    /* pvdc series: compose */\n"
                 "    pvdc_boot_reset(s);\n"
                 "    /* pvdc series: end compose */\n"),
                ("a marker misspelt",
                 "    pvdc_boot_reset(s);\n",
                 "    /* pvdc series: boot */ /* x */\n"
                 "    pvdc_boot_reset(s);\n")]:
            saved = replace_once(repo, "hw/display/pvdc.c", old, new)
            g = subprocess.run([sys.executable,
                                os.path.join(repo, "scripts", "graft-qemu.py"),
                                fresh], capture_output=True, text=True)
            shutil.rmtree(os.path.join(tmp, "bad"), ignore_errors=True)
            src, diff_out, _ = series(pristine, repo, os.path.join(tmp, "bad"))
            with open(path, "w") as f:
                f.write(saved)
            case(f"{why} stops the graft and the series",
                 g.returncode and src and "pvdc.c" in g.stderr and
                 "pvdc.c" in diff_out, g.stderr + diff_out)
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
