"""Where the project's pieces are, for every Python script of the project.

scripts/lib.sh is the shell side of the same rules: PVDC_BUILD and
PVDC_CACHE from the environment when set, else build/ in the checkout and
~/.cache/pvdc.
"""

import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("PVDC_BUILD", os.path.join(ROOT, "build"))
CACHE = os.environ.get("PVDC_CACHE", os.path.join(
    os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "pvdc"))


def qemu_python(variant="qemu"):
    """QEMU's own Python packages (qemu.qmp, qemu.machine) of the QEMU
    tree scripts/build-qemu.sh built VARIANT from."""
    return os.path.join(os.path.realpath(os.path.join(BUILD,
                                                      variant + "-src")),
                        "python")
