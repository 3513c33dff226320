#!/usr/bin/python3
"""The libvirt graft is incremental, and its --diff is the patch series (TAP).

On a copy of the pristine libvirt tree (Debian's source package, as
scripts/fetch-libvirt.sh extracts it): grafting twice changes nothing the
second time, a changed fragment rewrites only its file, and the patches
that --diff prints apply to the pristine tree with patch(1), in order, and
give the grafted tree without its marker comments.
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
GRAFT = os.path.join(ROOT, "scripts", "graft-libvirt.py")
MARKER = re.compile(r"^(/\* |<!-- |\.\. |# )pvdc graft (begin|end) .*\n",
                    re.M)


def graft(repo, tree):
    out = subprocess.run([sys.executable,
                          os.path.join(repo, "scripts", "graft-libvirt.py"),
                          tree], capture_output=True, text=True,
                         check=True).stdout
    return sorted(l.split()[1] for l in out.splitlines()
                  if l.strip().startswith("grafted "))


def grafted_files():
    files = set()
    for name in os.listdir(os.path.join(ROOT, "libvirt")):
        with open(os.path.join(ROOT, "libvirt", name)) as f:
            files |= set(re.findall(r"^#@ file (\S+)", f.read(), re.M))
    return sorted(files)


def main():
    n = failed = 0

    def case(name, ok, why=""):
        nonlocal n, failed
        n += 1
        if not ok:
            failed += 1
        print(f"{'ok' if ok else 'not ok'} {n} - {name}")
        if not ok:
            for line in str(why).splitlines()[:40]:
                print(f"# {line}")

    p = subprocess.run([os.path.join(ROOT, "scripts", "fetch-libvirt.sh")],
                       capture_output=True, text=True)
    if p.returncode != 0:
        print(f"not ok 1 - the pristine libvirt source is there\n"
              f"# {p.stderr.strip()}\n1..1")
        return 1
    pristine = p.stdout.strip()
    files = grafted_files()
    with tempfile.TemporaryDirectory() as tmp:
        repo = os.path.join(tmp, "repo")
        shutil.copytree(ROOT, repo, ignore=shutil.ignore_patterns(
            "build", ".git", "*.o", "*.ko"))
        tree = os.path.join(tmp, "libvirt")
        base = os.path.join(tmp, "pristine")
        for rel in files:
            for t in (tree, base):
                os.makedirs(os.path.dirname(os.path.join(t, rel)),
                            exist_ok=True)
                shutil.copyfile(os.path.join(pristine, rel),
                                os.path.join(t, rel))

        first = graft(repo, tree)
        case("the first graft changes every file the series names",
             first == files, f"{first} != {files}")
        again = graft(repo, tree)
        case("grafting again rewrites nothing", again == [], again)

        series = sorted(os.listdir(os.path.join(repo, "libvirt")))
        path = os.path.join(repo, "libvirt", series[-1])
        with open(path) as f:
            text = f.read()
        with open(path, "w") as f:
            f.write(text.replace('model = "pvdc";', 'model = "pvdc-x";', 1))
        touched = graft(repo, tree)
        case("a changed fragment rewrites exactly its file",
             touched == ["src/qemu/qemu_command.c"], touched)
        with open(path, "w") as f:
            f.write(text)
        graft(repo, tree)

        diff = subprocess.run([sys.executable, GRAFT, "--diff", base],
                              capture_output=True, text=True, check=True)
        patches = re.findall(r"^Subject: \[PATCH (\d+)/(\d+)\]", diff.stdout,
                             re.M)
        case("--diff prints one patch per graft file",
             len(patches) == len(series) and
             all(int(t) == len(series) for _, t in patches), patches)
        p = subprocess.run(["patch", "-p1", "-s", "-d", base],
                           input=diff.stdout, capture_output=True, text=True)
        case("the patches apply to the pristine tree", p.returncode == 0,
             p.stdout + p.stderr)
        differ = []
        for rel in files:
            with open(os.path.join(tree, rel)) as f:
                want = MARKER.sub("", f.read())
            with open(os.path.join(base, rel)) as f:
                if f.read() != want:
                    differ.append(rel)
        case("the patched tree is the grafted tree without markers",
             not differ, differ)
    print(f"1..{n}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
