#!/usr/bin/python3
"""libvirt: the example domain runs under a real libvirt daemon (TAP).

The test starts its own libvirtd with everything private: its sockets,
configuration and state live in a temporary folder, bind-mounted over
/etc/libvirt, /var/lib/libvirt, /run/libvirt, /var/log/libvirt and
/var/cache/libvirt inside a mount namespace of the daemon's own, so the
host's libvirt (if any) is neither used nor touched.  It then defines
docs/examples/pvdc-domain.xml with the paths of this build, starts it under
TCG, waits for the guest on the serial log, takes a "virsh screenshot" of
pvdc's head 0, and destroys and undefines the domain.

Every step has a timeout.  When the daemon cannot run on this machine the
test says why and reports SKIP, never a pass.
"""

import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "scripts"))
from pvdc_paths import ROOT  # noqa: E402

sys.path.insert(0, os.path.join(ROOT, "tests", "guest"))
from pvdc_harness import Tap, artefact  # noqa: E402

EXAMPLE = os.path.join(ROOT, "docs", "examples", "pvdc-domain.xml")
QEMU_NS = "http://libvirt.org/schemas/domain/qemu/1.0"
# The daemon's private view of the system folders it uses.
PRIVATE_DIRS = ["/etc/libvirt", "/var/lib/libvirt", "/run/libvirt",
                "/var/log/libvirt", "/var/cache/libvirt"]

DAEMON_TIMEOUT = 60
VIRSH_TIMEOUT = 60
BOOT_TIMEOUT = float(os.environ.get("PVDC_BOOT_TIMEOUT", "180"))

# The daemon and the QEMUs it starts run as root with nothing that needs
# systemd, cgroups or virtlogd: plain processes with file logs.
QEMU_CONF = """\
user = "root"
group = "root"
dynamic_ownership = 0
remember_owner = 0
security_driver = "none"
cgroup_controllers = [ ]
namespaces = [ ]
stdio_handler = "file"
vnc_listen = "127.0.0.1"
"""


class Skip(Exception):
    """The machine cannot run the daemon; the reason says why."""


def run(cmd, timeout, check=True, **kw):
    try:
        p = subprocess.run(cmd, capture_output=True, text=True,
                           timeout=timeout, **kw)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"{' '.join(cmd)}: no answer within "
                             f"{timeout} s")
    if check and p.returncode != 0:
        raise AssertionError(f"{' '.join(cmd)} exited {p.returncode}:\n"
                             f"{p.stdout}{p.stderr}".rstrip())
    return p


class Libvirtd:
    """A libvirtd of the test's own, in a private mount namespace."""

    def __init__(self, tmp):
        self.tmp = tmp
        self.proc = None
        self.created = []
        self.sock = os.path.join(tmp, "sock", "libvirt-sock")
        self.uri = f"qemu:///system?socket={self.sock}"
        self.log = os.path.join(tmp, "libvirtd.log")

    def private(self, path):
        """Where a system path is, seen from outside the namespace."""
        for d in PRIVATE_DIRS:
            if path == d or path.startswith(d + "/"):
                return os.path.join(self.tmp, "root", d.lstrip("/"),
                                    os.path.relpath(path, d))
        return path

    def start(self):
        for exe in ["/usr/sbin/libvirtd", "/usr/bin/virsh",
                    "/usr/bin/unshare"]:
            if not os.access(exe, os.X_OK):
                raise Skip(f"{exe} is missing (scripts/setup-host.sh "
                           "installs it)")
        if os.geteuid() != 0:
            raise Skip("libvirtd's qemu:///system driver needs root")
        os.makedirs(os.path.join(self.tmp, "sock"))
        for d in PRIVATE_DIRS:
            os.makedirs(self.private(d), exist_ok=True)
            # Mount points only: removed again when the test created them.
            if not os.path.isdir(d):
                os.makedirs(d)
                self.created.append(d)
        with open(self.private("/etc/libvirt/qemu.conf"), "w") as f:
            f.write(QEMU_CONF)
        binds = [(self.private(d), d) for d in PRIVATE_DIRS]
        binds += self.account_files()
        conf = os.path.join(self.tmp, "libvirtd.conf")
        with open(conf, "w") as f:
            f.write(f'unix_sock_dir = "{os.path.dirname(self.sock)}"\n'
                    'unix_sock_rw_perms = "0700"\n'
                    'auth_unix_ro = "none"\n'
                    'auth_unix_rw = "none"\n'
                    f'log_outputs = "2:file:{self.log}"\n')
        q = shlex.quote
        mounts = " && ".join(f"mount --bind {q(src)} {q(dst)}"
                             for src, dst in binds)
        script = (f"{mounts} && exec /usr/sbin/libvirtd --config {q(conf)} "
                  f"--pid-file {q(self.tmp + '/libvirtd.pid')}")
        self.proc = subprocess.Popen(
            ["unshare", "--mount", "--propagation", "private", "--",
             "sh", "-c", script],
            stdout=open(os.path.join(self.tmp, "libvirtd.out"), "w"),
            stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + DAEMON_TIMEOUT
        while True:
            if self.proc.poll() is not None:
                raise Skip("libvirtd exited with status "
                           f"{self.proc.returncode} at start: "
                           f"{self.why()}")
            if os.path.exists(self.sock):
                p = self.virsh(["uri"], check=False, timeout=10)
                if p.returncode == 0:
                    break
            if time.monotonic() > deadline:
                self.stop()
                raise Skip(f"libvirtd did not answer within "
                           f"{DAEMON_TIMEOUT} s: {self.why()}")
            time.sleep(0.2)
        # The QEMU driver must have loaded.  ("virsh version" is no test:
        # it looks for a QEMU in PATH, and the domain names its own.)
        p = self.virsh(["list", "--all"], check=False)
        if p.returncode != 0:
            why = (p.stderr.strip() or p.stdout.strip()) + "; " + self.why()
            self.stop()
            raise Skip(f"libvirtd runs but its QEMU driver does not: {why}")

    def account_files(self):
        """
        Debian's libvirtd resolves its default QEMU user and group,
        libvirt-qemu, before it reads qemu.conf, and fails when they do not
        exist.  They come with libvirt-daemon-system, which also sets up
        system services; instead the daemon's namespace sees copies of
        /etc/passwd and /etc/group that have them (qemu.conf then runs
        QEMU as root anyway).
        """
        files = {}
        for path in ["/etc/passwd", "/etc/group"]:
            with open(path) as f:
                files[path] = f.read()
        used = {int(f[2]) for text in files.values()
                for f in (l.split(":") for l in text.splitlines())
                if len(f) > 3 and f[2].isdigit()}
        free = next(i for i in range(64055, 65000) if i not in used)
        lines = {"/etc/passwd": f"libvirt-qemu:x:{free}:{free}::"
                                "/nonexistent:/usr/sbin/nologin\n",
                 "/etc/group": f"libvirt-qemu:x:{free}:\n"}
        binds = []
        for path, text in files.items():
            if not re.search(r"^libvirt-qemu:", text, re.M):
                text += lines[path]
            copy = os.path.join(self.tmp, os.path.basename(path))
            with open(copy, "w") as f:
                f.write(text)
            binds.append((copy, path))
        return binds

    def why(self):
        """The daemon's last error lines, for the skip message."""
        text = ""
        for name in ["libvirtd.out", "libvirtd.log"]:
            try:
                with open(os.path.join(self.tmp, name)) as f:
                    text += f.read()
            except OSError:
                pass
        lines = [l for l in text.splitlines() if "error" in l.lower()]
        return " | ".join(lines[-3:] or text.strip().splitlines()[-3:]
                          or ["no message"])

    def virsh(self, args, check=True, timeout=VIRSH_TIMEOUT):
        return run(["virsh", "-q", "-c", self.uri] + args, timeout, check)

    def stop(self):
        if not self.proc:
            return
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self.proc = None
        for d in reversed(self.created):
            try:
                os.rmdir(d)
            except OSError:
                pass
        self.created = []


class Domain:
    """The example domain, with this build's paths."""

    def __init__(self, daemon, tmp):
        self.daemon = daemon
        self.name = f"pvdc-libvirt-test-{os.getpid()}"
        self.serial = os.path.join(tmp, "serial.log")
        self.xml = os.path.join(tmp, "domain.xml")
        self.defined = False

    def write_xml(self):
        kver = open(artefact("kernel-version")).read().strip()
        kernel = os.path.join(os.path.realpath(artefact("kernel")),
                              f"boot/vmlinuz-{kver}")
        initramfs = os.environ.get("PVDC_INITRAMFS") or \
            artefact("meson/initramfs.gz")
        qemu = os.path.realpath(artefact("qemu/qemu-system-x86_64"))
        ET.register_namespace("qemu", QEMU_NS)
        tree = ET.parse(EXAMPLE)
        dom = tree.getroot()
        dom.find("name").text = self.name
        dom.find("os/kernel").text = kernel
        dom.find("os/initrd").text = os.path.realpath(initramfs)
        dom.find("devices/emulator").text = qemu
        for tag in ("serial", "console"):
            dom.find(f"devices/{tag}/source").set("path", self.serial)
        for arg in dom.iter(f"{{{QEMU_NS}}}arg"):
            arg.set("value", re.sub(r"unix:[^,]*",
                                    f"unix:{self.daemon.tmp}/head1.vnc",
                                    arg.get("value")))
        tree.write(self.xml)

    def define(self):
        self.write_xml()
        self.daemon.virsh(["define", self.xml])
        self.defined = True

    def start(self):
        self.daemon.virsh(["start", self.name], timeout=120)

    def serial_log(self):
        try:
            with open(self.serial, "rb") as f:
                return f.read().decode(errors="replace")
        except OSError:
            return ""

    def wait_for(self, pattern, timeout, what):
        deadline = time.monotonic() + timeout
        while True:
            log = self.serial_log()
            m = re.search(pattern, log)
            if m:
                return m
            state = self.daemon.virsh(["domstate", self.name],
                                      check=False).stdout.strip()
            if state and state != "running":
                raise AssertionError(f"domain is {state} before {what}:\n"
                                     f"{self.tail(log)}{self.qemu_log()}")
            if time.monotonic() > deadline:
                raise AssertionError(f"timeout: no {what} within "
                                     f"{timeout:.0f} s\n{self.tail(log)}")
            time.sleep(0.5)

    def tail(self, log, lines=25):
        return "".join("  | " + l + "\n" for l in log.splitlines()[-lines:])

    def qemu_log(self):
        path = self.daemon.private(f"/var/log/libvirt/qemu/{self.name}.log")
        try:
            with open(path) as f:
                return "QEMU log:\n" + self.tail(f.read(), 15)
        except OSError:
            return ""

    def destroy_and_undefine(self):
        state = self.daemon.virsh(["domstate", self.name],
                                  check=False).stdout.strip()
        if state == "running" or state == "paused":
            self.daemon.virsh(["destroy", self.name])
        if self.defined:
            self.daemon.virsh(["undefine", self.name])
            self.defined = False
        p = self.daemon.virsh(["list", "--all", "--name"], check=False)
        if self.name in p.stdout.split():
            raise AssertionError(f"{self.name} still listed:\n{p.stdout}")

    def kill_leftover_qemu(self):
        """Last resort when the daemon died with the domain running."""
        pidfile = self.daemon.private(f"/run/libvirt/qemu/{self.name}.pid")
        try:
            pid = int(open(pidfile).read().strip())
            # Only that QEMU: a stale pid file may name another process.
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if f"guest={self.name},".encode() in f.read():
                    os.kill(pid, signal.SIGKILL)
        except (OSError, ValueError):
            pass


def guest_boots(dom):
    dom.wait_for(r"@@PVDC-READY \S+", BOOT_TIMEOUT, "@@PVDC-READY on ttyS0")


def pvdc_driver_binds(dom):
    log = dom.serial_log()
    if "@@PVDC-MODULE-FAILED pvdc.ko" in log:
        raise AssertionError("init could not load pvdc.ko:\n" + dom.tail(log))
    dom.wait_for(r"Initialized pvdc \S+ .*on minor \d+", 30,
                 "'[drm] Initialized pvdc' kernel message")


def image_size(data):
    """(width, height) of a PNG or binary PPM, None for anything else."""
    if data.startswith(b"\x89PNG\r\n\x1a\n") and data[12:16] == b"IHDR":
        return (int.from_bytes(data[16:20], "big"),
                int.from_bytes(data[20:24], "big"))
    m = re.match(rb"P6\s+(\d+)\s+(\d+)\s+255\s", data)
    return (int(m.group(1)), int(m.group(2))) if m else None


def screenshot_shows_pvdc_head0(dom, tmp):
    path = os.path.join(tmp, "head0.img")
    dom.daemon.virsh(["screenshot", dom.name, path, "--screen", "0"])
    with open(path, "rb") as f:
        data = f.read()
    size = image_size(data)
    if not size or not size[0] or not size[1]:
        raise AssertionError(f"not a PNG or PPM image ({len(data)} bytes): "
                             f"{data[:32]!r}")
    # The same head through QEMU's own screendump, by device and head: the
    # sizes match when libvirt's screen 0 is pvdc's head 0.
    ref = os.path.join(tmp, "pvdc0-head0.png")
    dom.daemon.virsh(["qemu-monitor-command", dom.name, json.dumps(
        {"execute": "screendump",
         "arguments": {"filename": ref, "device": "pvdc0", "head": 0,
                       "format": "png"}})])
    with open(ref, "rb") as f:
        expected = image_size(f.read())
    if size != expected:
        raise AssertionError(f"screenshot is {size[0]}x{size[1]}, pvdc0 "
                             f"head 0 is {expected}")
    print(f"# virsh screenshot: {size[0]}x{size[1]}, {len(data)} bytes")


def on_sigterm(signum, frame):
    # meson's timeout: unwind through the clean-up, once.
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    sys.exit(1)


def main():
    signal.signal(signal.SIGTERM, on_sigterm)
    tap = Tap()
    tmp = tempfile.mkdtemp(prefix="pvdc-libvirt-")
    daemon = Libvirtd(tmp)
    dom = Domain(daemon, tmp)
    guest_cases = [("guest boots under libvirt", guest_boots, dom),
                   ("pvdc driver binds in the guest", pvdc_driver_binds, dom),
                   ("virsh screenshot shows pvdc head 0",
                    screenshot_shows_pvdc_head0, dom, tmp)]
    try:
        try:
            daemon.start()
        except (Skip, subprocess.TimeoutExpired) as e:
            print(f"# libvirtd cannot run here: {e}", flush=True)
            for name in ["libvirtd starts with private folders",
                         "example domain is defined", "domain starts"] + \
                    [c[0] for c in guest_cases] + \
                    ["domain is destroyed and undefined", "libvirtd stops"]:
                tap.skip(name, "libvirtd cannot run here (reason above)")
            return tap.done()
        tap.case("libvirtd starts with private folders", lambda: None)

        try:
            failed = tap.failed
            tap.case("example domain is defined", dom.define)
            if tap.failed == failed:
                tap.case("domain starts", dom.start)
            else:
                tap.skip("domain starts", "the domain is not defined")
            if tap.failed > failed:
                for line in dom.qemu_log().splitlines():
                    print(f"# {line}")
                for case in guest_cases:
                    tap.skip(case[0], "the domain did not start")
            else:
                for case in guest_cases:
                    tap.case(*case)
        finally:
            tap.case("domain is destroyed and undefined",
                     dom.destroy_and_undefine)
            tap.case("libvirtd stops", daemon.stop)
    finally:
        dom.kill_leftover_qemu()
        daemon.stop()
        if tap.failed:
            print(f"# files kept in {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
