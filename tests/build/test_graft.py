#!/usr/bin/python3
"""The graft into QEMU is incremental (TAP).

scripts/graft-qemu.py must rewrite only the files whose content changed, so
that QEMU's ninja recompiles just those; and the integration fragments must
be inserted once, at their anchors, whatever the number of grafts.
"""

import os
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
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
