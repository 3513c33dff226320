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

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
QEMU_FILES = ["hw/display/meson.build", "hw/display/Kconfig",
              "hw/display/trace-events", "tests/qtest/meson.build",
              "tests/qtest/fuzz/generic_fuzz_configs.h"]
# What each fake file holds: the anchor its fragment needs.
FAKE_CONTENT = {
    "tests/qtest/meson.build": "qtest_executables = {}\n",
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
    n = failed = 0

    def case(name, ok, why=""):
        nonlocal n, failed
        n += 1
        if not ok:
            failed += 1
        print(f"{'ok' if ok else 'not ok'} {n} - {name}")
        if not ok:
            print(f"# {why}")

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
        case("each fragment is inserted once",
             text.count("pvdc graft begin") == 1, text)

        with open(os.path.join(tree, "tests/qtest/meson.build")) as f:
            text = f.read()
        case("the qtest fragment sits before its anchor",
             text.index("pvdc-test") < text.index("qtest_executables = {}"),
             text)
    print(f"1..{n}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
