#!/usr/bin/python3
"""The upstream patch series applies to QEMU with git am and builds at
every step (TAP).

scripts/graft-qemu.py --diff turns the graft into the series to post
upstream.  This test does what a maintainer would: in a scratch git
repository holding the unmodified QEMU source the project builds from
(Debian's 10.0.x source package), "git am" the series, then build every
commit in turn as upstream wants a bisectable series built: QEMU's
-Werror, its whole manual with Sphinx's warnings as errors (so a broken
page or a page in no table of contents fails), each patch's own qtests
at that patch: those it adds, and those whose file it changes (a later
concern's case added to an earlier concern's test).  Last, the series'
result must be a plain graft of the same sources onto the same QEMU
files (without the graft's marker lines).

The scratch repository and its build directory are kept in the cache,
keyed by the QEMU version and the configuration, and reused: a commit
whose tree was built before is not built again, the manual only when what
it is built from changed, and a series identical to the last verified one
is not applied again.  The first run builds QEMU
from scratch (about as long as scripts/build-qemu.sh's first build, plus
the manual).
"""

import fcntl
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "scripts"))
from pvdc_tap import Tap  # noqa: E402
from pvdc_paths import CACHE, ROOT  # noqa: E402
from scratch_git import (apply_series, cover_names_every_patch,  # noqa: E402
                         git, log, run, scratch_repository, subject)

# A minimal QEMU (q35, and pvdc once the series has its Kconfig symbol:
# the device list is written per commit), with git's default for a
# checkout (-Werror) and the manual.  Every commit is built, so the device
# set is kept small; the project's own build (scripts/build-qemu.sh) has
# QEMU's default device set, where pvdc comes from its Kconfig default.
CONFIGURE = ["--python=/usr/bin/python3", "--target-list=x86_64-softmmu",
             "--without-default-features", "--without-default-devices",
             "--with-devices-x86_64=pvdc-series", "--enable-tcg",
             "--enable-kvm", "--enable-pixman", "--enable-vnc", "--enable-png",
             "--enable-docs", "--enable-werror", "--disable-download",
             "--disable-install-blobs"]
DEVICES = "configs/devices/x86_64-softmmu/pvdc-series.mak"
BUILD_TIMEOUT = 3 * 3600
# Where the qtests' QEMU finds its firmware (the +ds source has none), as
# scripts/build-qemu.sh configures it: qemu-system-data's blobs and SeaBIOS.
FIRMWARE = ["/usr/share/qemu", "/usr/share/seabios"]
QTEST_TIMEOUT = 1800
# In the build directory: the commit whose manual it holds.
DOCS_BUILT = "pvdc-manual-commit"


def make_series(src, out):
    """(cover letter or None, [patches])."""
    shutil.rmtree(out, ignore_errors=True)
    rc, text = run([sys.executable, os.path.join(ROOT, "scripts",
                                                 "graft-qemu.py"),
                    "--diff", src, "-o", out])
    if rc:
        raise RuntimeError(f"graft-qemu.py --diff exited {rc}:\n{text}")
    files = sorted(os.path.join(out, f) for f in os.listdir(out))
    cover = [f for f in files if os.path.basename(f).startswith("0000-")]
    return (cover[0] if cover else None), [f for f in files
                                           if f not in cover]


def series_key(patches, version):
    # A series is verified once each patch's qtests, those it adds and
    # those it changes, passed too.
    h = hashlib.sha256("\n".join([version, "qtests added or changed"] +
                                 CONFIGURE).encode())
    for path in patches:
        with open(path) as f:
            # The date does not change what is applied and built.
            h.update(re.sub(r"^Date: .*\n", "", f.read(), flags=re.M)
                     .encode())
    return h.hexdigest()


def pvdc_qtests(repo):
    with open(os.path.join(repo, "tests", "qtest", "meson.build")) as f:
        return sorted(set(re.findall(r"'(pvdc[\w-]*-test)'", f.read())))


def qemu_wrapper(build):
    """The build's QEMU with the firmware path, under the name the qtests
    take the target from."""
    path = os.path.join(build, "pvdc-qtest", "qemu-system-x86_64")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write("#!/bin/sh\nexec " +
                os.path.join(build, "qemu-system-x86_64") + " " +
                " ".join(f"-L {d}" for d in FIRMWARE) + ' "$@"\n')
    os.chmod(path, 0o755)
    return path


def run_qtests(build, tests):
    """Run the qtests TESTS of the commit just built; (ok, output)."""
    out, ok = [], True
    qemu = qemu_wrapper(build)
    for t in tests:
        t0 = time.monotonic()
        rc, text = run([f"./tests/qtest/{t}", "--tap", "-k"], cwd=build,
                       timeout=QTEST_TIMEOUT,
                       env={"QTEST_QEMU_BINARY": qemu,
                            # As many as meson.build's plain qtest runs.
                            "PVDC_MIGRATION_MUTATIONS": "200"})
        passed = len(re.findall(r"^ok ", text, re.M))
        failed = re.findall(r"^not ok .*$", text, re.M)
        log(f"{t}: {passed} passed, {len(failed)} failed in "
            f"{time.monotonic() - t0:.0f} s")
        if rc or failed or not passed:
            ok = False
            out.append(f"{t} exited {rc}: " + "\n".join(failed[:10]) +
                       "\n" + text[-3000:])
    return ok, "\n".join(out)


def manual_unchanged(repo, build, commit):
    """Whether the manual last built (the commit in DOCS_BUILT) is
    COMMIT's too: no file between them is under docs/ or one the manual
    was built from (ninja's record of Sphinx's depfile).  A checkout
    rewrites files, which would make ninja build the manual again for
    nothing: half an hour on a busy machine."""
    try:
        with open(os.path.join(build, DOCS_BUILT)) as f:
            last = f.read().strip()
    except FileNotFoundError:
        return False
    rc, changed = run(["git", "-C", repo, "diff", "--name-only", last,
                       commit])
    rc2, deps = run(["ninja", "-C", build, "-t", "deps", "docs/docs.stamp"])
    if rc or rc2 or "#deps" not in deps:
        return False
    inputs = {line.strip() for line in deps.splitlines()[1:]}
    return not any(rel.startswith("docs/") or
                   os.path.join(repo, rel) in inputs
                   for rel in changed.split())


def build_commit(repo, build, commit):
    """Check COMMIT out and build it; (ok, output)."""
    git(repo, "checkout", "-q", "--detach", commit)
    with open(os.path.join(repo, "hw", "display", "Kconfig")) as f:
        has_pvdc = re.search(r"^config PVDC$", f.read(), re.M)
    # pcie-root-port: the qtests plug a pvdc in one and unplug it.
    devices = "CONFIG_Q35=y\n" + ("CONFIG_PVDC=y\nCONFIG_PCIE_PORT=y\n"
                                  if has_pvdc else "")
    path = os.path.join(repo, DEVICES)
    try:
        with open(path) as f:
            same = f.read() == devices
    except FileNotFoundError:
        same = False
    if not same:
        with open(path, "w") as f:
            f.write(devices)
    if not os.path.exists(os.path.join(build, "build.ninja")):
        log("configuring QEMU: " + " ".join(CONFIGURE))
        shutil.rmtree(build, ignore_errors=True)
        os.makedirs(build)
        rc, out = run([os.path.join(repo, "configure")] + CONFIGURE,
                      cwd=build, timeout=1800)
        if rc:
            shutil.rmtree(build, ignore_errors=True)
            return False, "configure failed:\n" + out[-6000:]
    manual = [] if manual_unchanged(repo, build, commit) else ["html", "man"]
    targets = ["qemu-system-x86_64"] + manual + \
        [f"tests/qtest/{t}" for t in pvdc_qtests(repo)]
    rc, out = run(["ninja", "-C", build, "-n"] + targets)
    steps = len(re.findall(r"^\[\d+/\d+\]", out, re.M))
    log(f"building {commit[:12]}: {steps} step(s): {' '.join(targets)}")
    t0 = time.monotonic()
    rc, out = run(["ninja", "-C", build] + targets, timeout=BUILD_TIMEOUT)
    log(f"built in {time.monotonic() - t0:.0f} s")
    if rc == 0 and manual:
        with open(os.path.join(build, DOCS_BUILT), "w") as f:
            f.write(commit + "\n")
    failed = [line for line in out.splitlines()
              if line.startswith("FAILED") or "error" in line.lower()]
    return rc == 0, "\n".join(failed[:20]) + "\n" + out[-6000:]


def plain_graft_differs(repo, files):
    """FILES (what the series changed) that differ between the series'
    result and graft-qemu.py's graft onto base's version of them."""
    marker = re.compile(r"^(# |/\* )pvdc graft (begin|end)\b.*\n", re.M)
    differ = []
    with tempfile.TemporaryDirectory() as grafted:
        for rel in files:
            p = subprocess.run(["git", "-C", repo, "show", f"base:{rel}"],
                               capture_output=True)
            if p.returncode == 0:
                os.makedirs(os.path.dirname(os.path.join(grafted, rel)),
                            exist_ok=True)
                with open(os.path.join(grafted, rel), "wb") as f:
                    f.write(p.stdout)
        rc, out = run([sys.executable, os.path.join(ROOT, "scripts",
                                                    "graft-qemu.py"), grafted])
        if rc:
            return [f"graft-qemu.py exited {rc}: {out}"]
        for rel in files:
            with open(os.path.join(repo, rel)) as f:
                ours = f.read()
            try:
                with open(os.path.join(grafted, rel)) as f:
                    theirs = marker.sub("", f.read())
            except FileNotFoundError:
                theirs = None
            if ours != theirs:
                differ.append(rel)
    return differ


def main():
    tap = Tap()
    rc, src = run([os.path.join(ROOT, "scripts", "fetch-qemu.sh")])
    src = src.strip().splitlines()[-1] if src.strip() else ""
    if rc or not os.path.isdir(src):
        tap.result(False, "the QEMU source is there", src)
        return tap.done()
    version = os.path.basename(src).replace("qemu-", "")
    key = hashlib.sha256("\n".join([version] + CONFIGURE).encode())
    work = os.path.join(CACHE, f"qemu-series-{version}-"
                               f"{key.hexdigest()[:12]}")
    repo, build = os.path.join(work, "src"), os.path.join(work, "build")
    os.makedirs(work, exist_ok=True)
    lock = open(os.path.join(work, ".lock"), "w")
    fcntl.flock(lock, fcntl.LOCK_EX)

    cover, patches = make_series(src, os.path.join(work, "patches"))
    subjects = [subject(p) for p in patches]
    print("# " + "\n# ".join(subjects))
    tap.result(len(patches) >= 5 and all(
        re.match(r"\[PATCH \d+/\d+\] \S+: ", s) for s in subjects),
        f"graft-qemu.py --diff makes a series of {len(patches)} patches "
        "with subsystem prefixes", "\n".join(subjects))
    cover_names_every_patch(tap, cover, patches)

    verified_file = os.path.join(work, "verified-series")
    trees_file = os.path.join(work, "built-trees")
    key = series_key(patches, version)
    try:
        with open(verified_file) as f:
            verified = f.read().strip() == key
    except FileNotFoundError:
        verified = False
    try:
        with open(trees_file) as f:
            built = set(f.read().split())
    except FileNotFoundError:
        built = set()

    if verified:
        note = "the same series was applied and built before"
        tap.result(True, f"git am applies the series onto QEMU {version} "
                         f"({note})")
        for s in subjects:
            tap.result(True, f"{s} builds ({note})")
    else:
        scratch_repository(src, repo,
                           f"QEMU {os.path.basename(src)} (Debian's source "
                           "package)")
        rc, out = apply_series(repo, patches)
        tap.result(rc == 0, f"git am applies the series onto QEMU {version}",
                   out)
        if rc:
            for s in subjects:
                tap.skip(f"{s} builds", "the series does not apply")
        else:
            commits = git(repo, "rev-list", "--reverse",
                          "base..HEAD").split()
            all_built = len(commits) == len(subjects)
            before = set()      # the qtests of the commits before
            for commit, s in zip(commits, subjects):
                tree = git(repo, "rev-parse", commit + "^{tree}")
                git(repo, "checkout", "-q", "--detach", commit)
                tests = pvdc_qtests(repo)
                changed = git(repo, "diff", "--name-only", commit + "^",
                              commit).split()
                new = [t for t in tests if t not in before or
                       f"tests/qtest/{t}.c" in changed]
                before = set(tests)
                if tree in built:
                    tap.result(True, f"{s} builds (this tree was built "
                                     "before)")
                    if not new:
                        continue
                    ok, out = build_commit(repo, build, commit)
                else:
                    ok, out = build_commit(repo, build, commit)
                    tap.result(ok, f"{s} builds", "" if ok else out)
                    all_built &= ok
                    if ok:
                        built.add(tree)
                        with open(trees_file, "w") as f:
                            f.write("\n".join(sorted(built)) + "\n")
                if new:
                    # The qtests a patch adds pass at that patch.
                    if ok:
                        ok, out = run_qtests(build, new)
                    tap.result(ok, f"{s}: its qtests pass at this patch "
                                   f"({' '.join(new)})", out)
                    all_built &= ok
            git(repo, "checkout", "-q", "--detach", commits[-1])
            if all_built:
                with open(verified_file, "w") as f:
                    f.write(key + "\n")

    if not os.path.isdir(os.path.join(repo, ".git")):
        tap.skip("the series' result is a plain graft",
                 "no scratch repository")
    else:
        files = git(repo, "diff", "--name-only", "base", "HEAD").split()
        differ = plain_graft_differs(repo, files)
        tap.result(bool(files) and not differ,
                   "the series' result is a plain graft of the same sources "
                   f"({len(files)} files)",
                   "differ from the graft: " + " ".join(differ))
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
