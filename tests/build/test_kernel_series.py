#!/usr/bin/python3
"""The driver's Linux series applies with git am and builds in tree (TAP).

scripts/kernel-series.py turns guest-driver/ into the patch series to post
to dri-devel, drivers/gpu/drm/pvdc/.  This test does what a maintainer
would: in a scratch git repository holding Debian's linux-source-6.12 (the
tree scripts/build-debug-kernel.sh extracted into the cache), "git am" the
series, and at each commit that has the driver build it in tree with
CONFIG_DRM_PVDC=m and W=1, where a single warning fails; on each patch run
checkpatch.pl --strict (in a full tree, so without --no-tree), and on the
driver's files scripts/kernel-doc.  The cover letter must name every
patch.  Last, the module must be the one the out-of-tree build
(guest-driver/Kbuild, which DKMS uses) makes: same symbols, same modinfo
but for what says where it was built.

The kernel is configured as Debian's (the .config and Module.symvers of
the guest kernel's headers), so only the tree's scripts and the driver's
directory are built; the scratch repository and its prepared build
directory are kept in the cache and reused.
"""

import fcntl
import glob
import hashlib
import os
import re
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "scripts"))
from pvdc_paths import BUILD, CACHE, ROOT  # noqa: E402
from pvdc_tap import Tap  # noqa: E402
from scratch_git import (apply_series, cover_names_every_patch,  # noqa: E402
                         git, log, run, scratch_repository, subject,
                         title)

DRIVER_DIR = "drivers/gpu/drm/pvdc"
# modinfo fields that say where a module was built, not what it is.
BUILT_WHERE = {"srcversion", "intree", "name"}


def linux_source():
    """(version, tree) of the newest linux-source-6.12 in the cache."""
    ready = sorted(glob.glob(os.path.join(CACHE, "linux-source", "*",
                                          ".ready")))
    for stamp in reversed(ready):
        tree = os.path.join(os.path.dirname(stamp), "linux-source-6.12")
        if os.path.isfile(os.path.join(tree, "Makefile")):
            return os.path.basename(os.path.dirname(stamp)), tree
    return None, None


def kmake(repo, build, kver, *targets, timeout=3600):
    return run(["make", "-s", "-C", repo, f"O={build}",
                f"KERNELRELEASE={kver}", f"-j{os.cpu_count()}", *targets],
               timeout=timeout)


def prepare_build(repo, build, headers, kver):
    """BUILD configured as Debian's kernel with CONFIG_DRM_PVDC=m (the
    series' Kconfig must offer it), its scripts built; (ok, why)."""
    os.makedirs(build, exist_ok=True)
    with open(os.path.join(headers, ".config")) as f:
        config = f.read()
    with open(os.path.join(build, ".config"), "w") as f:
        f.write(config + "CONFIG_DRM_PVDC=m\n")
    rc, out = kmake(repo, build, kver, "olddefconfig")
    if rc:
        return False, "olddefconfig:\n" + out[-4000:]
    with open(os.path.join(build, ".config")) as f:
        if "CONFIG_DRM_PVDC=m\n" not in f.read():
            return False, "olddefconfig dropped CONFIG_DRM_PVDC=m"
    rc, out = kmake(repo, build, kver, "modules_prepare")
    if rc:
        return False, "modules_prepare:\n" + out[-4000:]
    # The exported symbols of the kernel the module is built for.
    shutil.copyfile(os.path.join(headers, "Module.symvers"),
                    os.path.join(build, "Module.symvers"))
    return True, ""


def build_module(repo, build, kver):
    """Build the driver's directory with W=1; (ok, output).  As a module
    directory of the configured tree (M=): an in-tree target would need
    vmlinux.o for modpost, which Debian's headers do not ship; the objects
    are written beside the sources."""
    moddir = f"M={os.path.join(repo, DRIVER_DIR)}"
    # From clean: an object kept from the commit before would not show its
    # warnings again.
    kmake(repo, build, kver, moddir, "clean")
    rc, out = kmake(repo, build, kver, "W=1", moddir, "modules")
    warnings = [line for line in out.splitlines()
                if re.search(r"\b(warning|error):", line)]
    return rc == 0 and not warnings, "\n".join(warnings[:30]) + \
        "\n" + out[-4000:]


def out_of_tree_module(headers, tmp):
    """guest-driver/ built as DKMS does, in a copy; the .ko or None."""
    moddir = os.path.join(tmp, "guest-driver")
    os.makedirs(moddir)
    for f in ["Kbuild"] + glob.glob(os.path.join(ROOT, "guest-driver",
                                                  "*.[ch]")):
        shutil.copy(os.path.join(ROOT, "guest-driver", f), moddir)
    rc, out = run(["make", "-s", "-C", headers, f"M={moddir}", "W=1",
                   "modules"])
    ko = os.path.join(moddir, "pvdc.ko")
    return (ko if rc == 0 else None), out


def modinfo(ko):
    rc, out = run(["/sbin/modinfo", ko])
    fields = []
    for line in out.splitlines():
        key, _, value = line.partition(":")
        if key not in BUILT_WHERE and key != "filename":
            fields.append(f"{key}: {value.strip()}")
    return sorted(fields)


def symbols(ko):
    rc, out = run(["nm", "--defined-only", ko])
    return sorted(" ".join(line.split()[1:]) for line in out.splitlines())


def main():
    tap = Tap()
    t0 = time.monotonic()
    version, src = linux_source()
    if not src:
        tap.result(False, "Debian's linux-source-6.12 is in the cache",
                   "run scripts/build-debug-kernel.sh, which extracts it "
                   f"into {CACHE}/linux-source")
        return tap.done()
    try:
        with open(os.path.join(BUILD, "kernel-version")) as f:
            kver = f.read().strip()
    except OSError as e:
        tap.result(False, "the guest kernel's version is known", e)
        return tap.done()
    headers = f"/usr/src/linux-headers-{kver}"
    with open(os.path.join(headers, ".config"), "rb") as f:
        key = hashlib.sha256(f.read() + version.encode()).hexdigest()[:12]
    work = os.path.join(CACHE, f"linux-series-{version}-{key}")
    repo, build = os.path.join(work, "src"), os.path.join(work, "build")
    os.makedirs(work, exist_ok=True)
    lock = open(os.path.join(work, ".lock"), "w")
    fcntl.flock(lock, fcntl.LOCK_EX)

    out_dir = os.path.join(work, "patches")
    shutil.rmtree(out_dir, ignore_errors=True)
    rc, out = run([sys.executable, os.path.join(ROOT, "scripts",
                                                "kernel-series.py"),
                   src, "-o", out_dir])
    tap.result(rc == 0, "kernel-series.py makes the series", out)
    if rc:
        return tap.done()
    patches = sorted(glob.glob(os.path.join(out_dir, "*.patch")))
    cover = [p for p in patches if os.path.basename(p).startswith("0000-")]
    patches = [p for p in patches if p not in cover]
    cover_names_every_patch(tap, cover[0] if cover else None, patches)
    subjects = [title(subject(p)) for p in patches]
    print("# " + "\n# ".join(subjects))

    scratch_repository(src, repo, f"Linux {os.path.basename(src)}",
                       hardlinks=True)
    rc, out = apply_series(repo, patches)
    tap.result(rc == 0, f"git am applies the series onto Linux {version}",
               out)
    if rc:
        return tap.done()
    commits = git(repo, "rev-list", "--reverse", "base..HEAD").split()

    checkpatch = ["perl", "scripts/checkpatch.pl", "--strict", "--terse",
                  "--show-types", "--color=never"]
    for path, s in zip(patches, subjects):
        rc, out = run(checkpatch + [path], cwd=repo)
        found = [line for line in out.splitlines()
                 if re.search(r": (ERROR|WARNING|CHECK):", line)]
        tap.result(rc == 0 and not found,
                   f"checkpatch --strict: {s}: {len(found)} findings",
                   found[:30] or out[-2000:])

    prepared = False
    for commit, s in zip(commits, subjects):
        git(repo, "checkout", "-q", "--detach", commit)
        if not os.path.exists(os.path.join(repo, DRIVER_DIR, "Makefile")):
            tap.result(True, f"{s}: builds (no driver yet)")
            continue
        if not prepared:
            log("configuring and preparing the tree (Debian's .config)")
            prepared, why = prepare_build(repo, build, headers, kver)
            if not prepared:
                tap.result(False, f"{s}: CONFIG_DRM_PVDC=m configures", why)
                return tap.done()
        t1 = time.monotonic()
        ok, out = build_module(repo, build, kver)
        log(f"built {DRIVER_DIR} in {time.monotonic() - t1:.0f} s")
        tap.result(ok, f"{s}: builds in tree with W=1 and no warning",
                   "" if ok else out)

    sources = sorted(glob.glob(os.path.join(repo, DRIVER_DIR, "*.[ch]")))
    rc, out = run(["perl", "scripts/kernel-doc", "-none", "-Wall"] +
                  [os.path.relpath(p, repo) for p in sources], cwd=repo)
    tap.result(rc == 0 and not out.strip(),
               f"kernel-doc -Wall finds nothing in {DRIVER_DIR}", out)

    intree = os.path.join(repo, DRIVER_DIR, "pvdc.ko")
    with tempfile.TemporaryDirectory() as tmp:
        ko, out = out_of_tree_module(headers, tmp)
        if not ko or not os.path.exists(intree):
            tap.result(False, "the out-of-tree module is the in-tree one",
                       out[-3000:] if not ko else "no in-tree pvdc.ko")
        else:
            a, b = modinfo(intree), modinfo(ko)
            tap.result(a == b, "the out-of-tree module has the in-tree one's "
                       f"modinfo ({len(a)} fields)",
                       [f"in tree only: {x}" for x in a if x not in b] +
                       [f"out of tree only: {x}" for x in b if x not in a])
            a, b = symbols(intree), symbols(ko)
            tap.result(a == b, "the out-of-tree module defines the in-tree "
                       f"one's symbols ({len(a)})",
                       [f"in tree only: {x}" for x in a if x not in b][:20] +
                       [f"out of tree only: {x}" for x in b
                        if x not in a][:20])
    log(f"wall time {time.monotonic() - t0:.0f} s")
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
