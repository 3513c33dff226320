"""What the series tests share: running commands, a scratch git repository
of an upstream source tree, and applying a series to it with git am.

tests/build/test_series.py (QEMU) and tests/build/test_kernel_series.py
(Linux) each keep their scratch repository in the cache and apply the
series the project generates to it, as a maintainer would.
"""

import os
import re
import shutil
import subprocess
import time

GIT_ENV = {"GIT_AUTHOR_NAME": "pvdc test", "GIT_AUTHOR_EMAIL": "test@pvdc",
           "GIT_COMMITTER_NAME": "pvdc test",
           "GIT_COMMITTER_EMAIL": "test@pvdc"}
# Left by scripts/fetch-*.sh in a source tree they extracted; not upstream's.
EXTRACTED_STAMP = ".pvdc-extracted"


def log(msg):
    print(f"# [{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def run(cmd, cwd=None, timeout=1800, env=None):
    """(exit status, output) of CMD."""
    try:
        p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True,
                           timeout=timeout,
                           env=dict(os.environ, **GIT_ENV, **(env or {})))
    except subprocess.TimeoutExpired as e:
        return 124, f"{' '.join(cmd)}: no end within {timeout} s\n" + \
            str(e.stdout or "")
    return p.returncode, p.stdout + p.stderr


def git(repo, *args, timeout=1800):
    rc, out = run(["git", "-C", repo, *args], timeout=timeout)
    if rc:
        raise RuntimeError(f"git {' '.join(args)} exited {rc}:\n{out}")
    return out.strip()


def scratch_repository(src, repo, message, hardlinks=False):
    """A git repository whose first commit, tagged base, is SRC as it is.
    With HARDLINKS the files are linked, not copied (git replaces a file
    it changes instead of writing into it, so SRC stays as extracted)."""
    if os.path.exists(os.path.join(repo, ".git", "pvdc-base-ready")):
        return
    log(f"creating the scratch repository from {src}")
    shutil.rmtree(repo, ignore_errors=True)
    if hardlinks:
        rc, out = run(["cp", "-al", src, repo])
        if rc:
            raise RuntimeError(out)
    else:
        shutil.copytree(src, repo, symlinks=True)
    stamp = os.path.join(repo, EXTRACTED_STAMP)
    if os.path.exists(stamp):
        os.remove(stamp)
    git(repo, "init", "-q")
    # Everything, .gitignore'd files too: the tree the project builds.
    git(repo, "add", "-A", "-f")
    git(repo, "commit", "-q", "-m", message)
    git(repo, "tag", "base")
    open(os.path.join(repo, ".git", "pvdc-base-ready"), "w").close()


def apply_series(repo, patches):
    """git am PATCHES onto base, from a clean tree: (exit status, output);
    on failure the repository is left at base."""
    run(["git", "-C", repo, "am", "--abort"])
    git(repo, "checkout", "-q", "--detach", "base")
    git(repo, "reset", "-q", "--hard", "base")
    git(repo, "clean", "-q", "-fdx")
    rc, out = run(["git", "-C", repo, "am", "--whitespace=error-all"] +
                  patches)
    if rc:
        run(["git", "-C", repo, "am", "--abort"])
    return rc, out


def subject(path):
    """The subject line of a patch file: "[PATCH n/m] area: what"."""
    with open(path) as f:
        m = re.search(r"^Subject: (.*)$", f.read(), re.M)
    return m.group(1) if m else path


def title(subject_line):
    """A subject without its [PATCH n/m] prefix."""
    return re.sub(r"^\[PATCH \d+/\d+\] ", "", subject_line)


def cover_names_every_patch(tap, cover, patches):
    """TAP: COVER is patch 0/N and names the title of each of PATCHES."""
    letter = ""
    if cover:
        with open(cover) as f:
            letter = f.read()
    missing = [t for t in (title(subject(p)) for p in patches)
               if t not in letter]
    tap.result(bool(cover) and bool(
        re.search(rf"^Subject: \[PATCH 0/{len(patches)}\] ", letter, re.M))
        and not missing,
        f"the cover letter is patch 0/{len(patches)} and names every patch",
        "no cover letter" if not cover else "missing: " + "; ".join(missing))
