#!/usr/bin/python3
"""checkpatch finds nothing in the device, the qtests and the driver (TAP).

QEMU's scripts/checkpatch.pl (from the QEMU source the project builds) on
every device, header, qtest and unit test file and on every patch of the
upstream series (scripts/graft-qemu.py --diff), and the kernel's checkpatch.pl
--strict (Debian's linux-source-6.12, scripts/fetch-checkpatch.sh) on
every file of the driver.  One case per file or patch; any error,
warning or (kernel) check fails it, unless checkpatch-exceptions in this
folder accepts it with its reason.
"""

import fnmatch
import glob
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "scripts"))
from pvdc_tap import Tap  # noqa: E402
from pvdc_paths import ROOT  # noqa: E402

EXCEPTIONS = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                          "checkpatch-exceptions")
QEMU_FILES = ["hw/display/pvdc*.[ch]", "include/hw/display/pvdc*.h",
              "tests/qtest/pvdc*.[ch]", "tests/unit/*.c"]
# The driver: what would go to drivers/gpu/drm/pvdc/.  The in-guest test
# programs under guest-driver/tests are user space.
KERNEL_FILES = ["guest-driver/*.[ch]"]
# --terse: "FILE:LINE: KIND:TYPE: message" (TYPE with --show-types only).
FINDING = re.compile(
    r"^(?:.*?:(\d+): )?(ERROR|WARNING|CHECK):(?:[A-Z_]+:)? ?(.*)$")


def exceptions():
    """[(tool, file glob, message regex)] from checkpatch-exceptions."""
    out = []
    with open(EXCEPTIONS) as f:
        for line in f:
            if not line.strip() or line.startswith("#"):
                continue
            fields = [x.strip() for x in line.split("|")]
            if len(fields) != 4 or not fields[3]:
                sys.exit(f"{EXCEPTIONS}: not 'tool | file | message | why': "
                         f"{line.strip()}")
            out.append((fields[0], fields[1], re.compile(fields[2])))
    return out


def findings(cmd):
    # Relative paths: checkpatch's rules depend on where a file is (tests/
    # may use g_assert_cmpint(), for one).
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600,
                       cwd=ROOT)
    # The line number stays in the text: a failure says where to look.
    found = [(m.group(2), (f"line {m.group(1)}: " if m.group(1) else "") +
              m.group(3).strip())
             for m in map(FINDING.match, p.stdout.splitlines()) if m]
    if p.returncode and not found:
        found = [("ERROR", f"checkpatch exited {p.returncode}: "
                           f"{(p.stdout + p.stderr).strip()[-500:]}")]
    return found


def report(tap, tool, name, found, accepted):
    accept = [e for e in accepted if e[0] == tool and
              fnmatch.fnmatch(os.path.basename(name) if tool == "qemu-patch"
                              else name, e[1])]
    left = [(kind, msg) for kind, msg in found
            if not any(e[2].search(msg) for e in accept)]
    counts = {k: sum(1 for kind, _ in left if kind == k)
              for k in ("ERROR", "WARNING", "CHECK")}
    text = (f"{counts['ERROR']} errors, {counts['WARNING']} warnings" +
            (f", {counts['CHECK']} checks" if tool == "kernel" else ""))
    if len(found) > len(left):
        text += f" ({len(found) - len(left)} accepted in checkpatch-exceptions)"
    tap.result(not left, f"{tool} checkpatch: {name}: {text}",
             [f"{kind}: {msg}" for kind, msg in left[:30]])
    return counts


def sources(pattern):
    """The files of the checkout that PATTERN matches (not build output
    such as Kbuild's pvdc.mod.c), or of the folder outside a checkout."""
    p = subprocess.run(["git", "-C", ROOT, "ls-files", "--",
                        ":(glob)" + pattern],
                       capture_output=True, text=True)
    if p.returncode == 0:
        return sorted(p.stdout.split())
    return sorted(os.path.relpath(f, ROOT)
                  for f in glob.glob(os.path.join(ROOT, pattern)))


def tool_path(script):
    p = subprocess.run([os.path.join(ROOT, "scripts", script)],
                       capture_output=True, text=True, timeout=1800)
    if p.returncode:
        sys.exit(f"{script} failed:\n{p.stderr}")
    return p.stdout.strip().splitlines()[-1]


def main():
    tap = Tap()
    accepted = exceptions()
    qemu = tool_path("fetch-qemu.sh")
    kernel = tool_path("fetch-checkpatch.sh")
    totals = {}

    def add(tool, counts):
        t = totals.setdefault(tool, {"ERROR": 0, "WARNING": 0, "CHECK": 0})
        for k, v in counts.items():
            t[k] += v

    qemu_cp = ["perl", os.path.join(qemu, "scripts", "checkpatch.pl"),
               "--no-tree", "--terse", "--color=never"]
    for pattern in QEMU_FILES:
        for rel in sources(pattern):
            add("qemu", report(tap, "qemu", rel,
                               findings(qemu_cp + ["-f", rel]), accepted))

    with tempfile.TemporaryDirectory() as tmp:
        p = subprocess.run([sys.executable,
                            os.path.join(ROOT, "scripts", "graft-qemu.py"),
                            "--diff", qemu, "-o", tmp],
                           capture_output=True, text=True, timeout=600)
        if p.returncode:
            tap.result(False, "graft-qemu.py --diff makes the series",
                     p.stderr.splitlines())
        for path in sorted(glob.glob(os.path.join(tmp, "*.patch"))):
            if os.path.basename(path).startswith("0000-"):
                continue    # the cover letter, which is no patch
            add("qemu-patch", report(tap, "qemu-patch",
                                     os.path.basename(path),
                                     findings(qemu_cp + [path]), accepted))

    kernel_cp = ["perl", os.path.join(kernel, "scripts", "checkpatch.pl"),
                 "--strict", "--no-tree", "--terse", "--show-types",
                 "--color=never"]
    for pattern in KERNEL_FILES:
        for rel in sources(pattern):
            add("kernel", report(tap, "kernel", rel,
                                 findings(kernel_cp + ["-f", rel]),
                                 accepted))
    for tool, t in totals.items():
        print(f"# {tool}: {t['ERROR']} errors, {t['WARNING']} warnings, "
              f"{t['CHECK']} checks")
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
