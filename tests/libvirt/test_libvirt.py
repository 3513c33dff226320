#!/usr/bin/python3
"""libvirt: pvdc as libvirt's own 'pvdc' video model, under a real daemon (TAP).

The daemon is the project's libvirt build (scripts/build-libvirt.sh:
Debian 12's libvirt 9.0.0 with the pvdc model grafted in), run from its
build folder with everything private: its sockets, configuration and state
live in a temporary folder, bind-mounted over /etc/libvirt,
/var/lib/libvirt, /run/libvirt, /var/log/libvirt and /var/cache/libvirt
inside a mount namespace of the daemon's own, so the host's libvirt (if
any) is neither used nor touched.  QEMU runs as an unprivileged user, as
on a real host (root would taint the domain).

The test checks what a user relies on: "virsh domcapabilities" offers the
model for the project's QEMU and not for Debian's; a domain made from
docs/examples/pvdc-native-domain.xml is defined, "virsh dumpxml" gives
its XML back, it starts with "-device pvdc" at the PCI address libvirt
chose, untainted; the guest boots and the driver binds; "virsh screenshot
--screen 0" and "--screen 1" show each head's own picture (pvdc-modeset's
colour bars, shifted by the head's number); SPICE shows both heads too.
Invalid values and a QEMU without pvdc are refused at define time with
libvirt's usual errors.  The example with nothing to boot shows SeaBIOS's
and OVMF's screens on head 0 through "virsh screenshot", checked as
tests/guest/test_boot.py checks QEMU's screendumps.  Then virt-install,
with its defaults for a Debian guest and --video pvdc, creates a new
qcow2 disk in the default storage pool, defines and starts the domain on
the QEMU the daemon finds first on its PATH (the project's): q35, a virtio
disk and NIC (user networking), xHCI and a USB tablet, SPICE with USB
redirection, ICH9 sound, virtio balloon and RNG.  The guest boots with the
driver held back, "virsh screenshot" shows the kernel's console on the
boot display of head 0, and once the driver is loaded pvdc's picture,
through virsh screenshot and SPICE.

Every step has a timeout.  When the daemon cannot run on this machine the
test says why and reports SKIP, never a pass.
"""

import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "scripts"))
from pvdc_paths import ROOT  # noqa: E402

sys.path.insert(0, os.path.join(ROOT, "tests", "guest"))
from pvdc_harness import (Tap, artefact, read_console,  # noqa: E402
                          read_picture, search_console)
from test_boot import (FIRMWARE_TIMEOUT, OVMF_CODE, OVMF_VARS,  # noqa: E402
                       shows_text)

sys.path.insert(0, os.path.join(ROOT, "tests", "ui"))
import ui_clients  # noqa: E402

EXAMPLE = os.path.join(ROOT, "docs", "examples", "pvdc-native-domain.xml")
QEMU_NS = "http://libvirt.org/schemas/domain/qemu/1.0"
# Debian's own QEMU (qemu-system-x86, 7.2): a QEMU without pvdc.
STOCK_QEMU = "/usr/bin/qemu-system-x86_64"
# The daemon's private view of the system folders it uses.
PRIVATE_DIRS = ["/etc/libvirt", "/var/lib/libvirt", "/run/libvirt",
                "/var/log/libvirt", "/var/cache/libvirt"]
HEADS = 2

DAEMON_TIMEOUT = 120
VIRSH_TIMEOUT = 120
BOOT_TIMEOUT = float(os.environ.get("PVDC_BOOT_TIMEOUT", "240"))
STEP_TIMEOUT = 120

# The daemon runs as root and starts QEMU as libvirt-qemu, with nothing
# that needs systemd, cgroups or virtlogd: plain processes with file logs.
QEMU_CONF = """\
user = "libvirt-qemu"
group = "libvirt-qemu"
dynamic_ownership = 1
remember_owner = 0
security_driver = "none"
cgroup_controllers = [ ]
namespaces = [ ]
stdio_handler = "file"
spice_listen = "127.0.0.1"
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
    """The project's libvirtd, in a private mount namespace."""

    def __init__(self, tmp):
        self.tmp = tmp
        self.proc = None
        self.created = []
        self.build = os.path.realpath(artefact("libvirt"))
        self.sock = os.path.join(tmp, "sock", "libvirt-sock")
        self.uri = f"qemu:///system?socket={self.sock}"
        self.log = os.path.join(tmp, "libvirtd.log")
        # The QEMU build, where the unprivileged QEMU user can reach it
        # (the cache may be under root's home).
        self.qemu_dir = os.path.join(tmp, "qemu")
        self.qemu = os.path.join(self.qemu_dir, "qemu-system-x86_64")
        self.qemu_uid = None
        # libvirt run from its build folder finds its driver modules and
        # data there, as with the build's own "run" script.
        self.env = dict(os.environ, LIBVIRT_DIR_OVERRIDE="1")

    def private(self, path):
        """Where a system path is, seen from outside the namespace."""
        for d in PRIVATE_DIRS:
            if path == d or path.startswith(d + "/"):
                return os.path.join(self.tmp, "root", d.lstrip("/"),
                                    os.path.relpath(path, d))
        return path

    def start(self):
        for exe in [f"{self.build}/src/libvirtd", f"{self.build}/tools/virsh",
                    "/usr/bin/unshare"]:
            if not os.access(exe, os.X_OK):
                raise Skip(f"{exe} is missing (scripts/build-libvirt.sh)")
        if os.geteuid() != 0:
            raise Skip("libvirtd's qemu:///system driver needs root")
        os.chmod(self.tmp, 0o755)
        os.makedirs(os.path.join(self.tmp, "sock"))
        os.makedirs(self.qemu_dir)
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
        qemu_build = os.path.realpath(artefact("qemu"))
        binds.append((qemu_build, self.qemu_dir))
        # The data files QEMU reads (firmware, keymaps) are links into the
        # cache; the QEMU user reads copies.
        share = "qemu-bundle/usr/local/share/qemu"
        shutil.copytree(os.path.join(qemu_build, share),
                        os.path.join(self.tmp, "qemu-data"), symlinks=False,
                        ignore_dangling_symlinks=True)
        binds.append((os.path.join(self.tmp, "qemu-data"),
                      os.path.join(self.qemu_dir, share)))
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
        script = (f"{mounts} && exec {q(self.build)}/src/libvirtd "
                  f"--config {q(conf)} "
                  f"--pid-file {q(self.tmp + '/libvirtd.pid')}")
        self.proc = subprocess.Popen(
            ["unshare", "--mount", "--propagation", "private", "--",
             "sh", "-c", script], env=dict(self.env, PATH=self.path()),
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
        p = self.virsh(["list", "--all"], check=False)
        if p.returncode != 0:
            why = (p.stderr.strip() or p.stdout.strip()) + "; " + self.why()
            self.stop()
            raise Skip(f"libvirtd runs but its QEMU driver does not: {why}")

    def path(self):
        """The daemon's PATH: the project's QEMU first, where libvirt
        looks for a default emulator (as after scripts/install.sh), then
        the system's programs (qemu-img for new disks)."""
        return ":".join([self.qemu_dir, "/usr/local/sbin", "/usr/local/bin",
                         "/usr/sbin", "/usr/bin", "/sbin", "/bin"])

    def account_files(self):
        """
        QEMU runs as libvirt-qemu, the user Debian's libvirt-daemon-system
        creates along with system services.  Instead, the daemon's namespace
        sees copies of /etc/passwd and /etc/group that have it.
        """
        files = {}
        for path in ["/etc/passwd", "/etc/group"]:
            with open(path) as f:
                files[path] = f.read()
        m = re.search(r"^libvirt-qemu:[^:]*:(\d+):", files["/etc/passwd"],
                      re.M)
        if m:
            self.qemu_uid = int(m.group(1))
        else:
            used = {int(f[2]) for text in files.values()
                    for f in (l.split(":") for l in text.splitlines())
                    if len(f) > 3 and f[2].isdigit()}
            self.qemu_uid = next(i for i in range(64055, 65000)
                                 if i not in used)
        uid = self.qemu_uid
        lines = {"/etc/passwd": f"libvirt-qemu:x:{uid}:{uid}::"
                                "/nonexistent:/usr/sbin/nologin\n",
                 "/etc/group": f"libvirt-qemu:x:{uid}:\n"}
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
        return run([f"{self.build}/tools/virsh", "-q", "-c", self.uri] + args,
                   timeout, check, env=self.env)

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


class SerialGuest:
    """The test guest's command protocol (guest-driver/image/init) over the
    serial console's unix socket."""

    def __init__(self, path):
        self.path = path
        self.sock = None
        self.log = bytearray()
        self.cond = threading.Condition()
        self.eof = False
        self.next_id = 1

    def connect(self, timeout):
        deadline = time.monotonic() + timeout
        while True:
            try:
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                s.connect(self.path)
                break
            except OSError:
                s.close()
                if time.monotonic() > deadline:
                    raise AssertionError(f"no serial socket {self.path}")
                time.sleep(0.2)
        self.sock = s
        threading.Thread(target=read_console, args=(self, s),
                         daemon=True).start()

    def wait_for(self, pattern, timeout, what, start=0):
        m = search_console(self, re.compile(pattern), timeout, start)
        if not m:
            raise AssertionError(
                f"{'guest console closed' if self.eof else 'timeout'}"
                f" waiting for {what}:\n{self.tail()}")
        return m

    def tail(self, lines=25):
        text = bytes(self.log).decode(errors="replace").splitlines()
        return "\n".join("  | " + l for l in text[-lines:])

    def run(self, cmd, timeout=STEP_TIMEOUT):
        cid = self.next_id
        self.next_id += 1
        with self.cond:
            start = len(self.log)
        self.sock.sendall(f"{cid} {cmd}\n".encode())
        m = self.wait_for(rb"@@PVDC-DONE %d (\d+)\r?\n" % cid, timeout,
                          f"guest command {cmd!r}", start)
        out = bytes(self.log[start:m.start()]).decode(errors="replace")
        return int(m.group(1)), out

    def close(self):
        if self.sock:
            self.sock.close()


class Domain:
    """A domain made from the native-model example, with this build's
    paths."""

    def __init__(self, daemon, tmp, name="pvdc-native"):
        self.daemon = daemon
        self.name = f"{name}-{os.getpid()}"
        # Its boot files and serial socket, apart from other domains'.
        self.guest_dir = os.path.join(tmp, name)
        self.serial_path = os.path.join(self.guest_dir, "serial.sock")
        self.xml_path = os.path.join(tmp, f"{name}.xml")
        self.defined = False
        self.serial = SerialGuest(self.serial_path)
        # What "virsh undefine" removes with the domain.
        self.undefine_flags = []

    def boot_files(self):
        """The test guest's kernel and initramfs, copied where the QEMU
        user reads them: {"kernel": path, "initrd": path}."""
        os.makedirs(self.guest_dir, exist_ok=True)
        os.chown(self.guest_dir, self.daemon.qemu_uid, self.daemon.qemu_uid)
        kver = open(artefact("kernel-version")).read().strip()
        kernel = os.path.join(os.path.realpath(artefact("kernel")),
                              f"boot/vmlinuz-{kver}")
        initramfs = os.environ.get("PVDC_INITRAMFS") or \
            artefact("meson/initramfs.gz")
        boot = {}
        for what, src in [("kernel", kernel), ("initrd", initramfs)]:
            boot[what] = os.path.join(self.guest_dir, what)
            shutil.copyfile(src, boot[what])
            os.chmod(boot[what], 0o644)
        return boot

    def write_xml(self, emulator=None, model=None):
        """The example with this build's paths; MODEL overrides attributes
        of <model> (None removes one)."""
        boot = self.boot_files()
        tree = ET.parse(EXAMPLE)
        dom = tree.getroot()
        dom.find("name").text = self.name
        dom.find("os/kernel").text = boot["kernel"]
        dom.find("os/initrd").text = boot["initrd"]
        dom.find("devices/emulator").text = emulator or self.daemon.qemu
        for tag in ("serial", "console"):
            dom.find(f"devices/{tag}/source").set("path", self.serial_path)
        m = dom.find("devices/video/model")
        for key, value in (model or {}).items():
            if value is None:
                m.attrib.pop(key, None)
            else:
                m.set(key, value)
        tree.write(self.xml_path)
        return self.xml_path

    def define(self, **kw):
        self.daemon.virsh(["define", self.write_xml(**kw)])
        self.defined = True

    def dumpxml(self, *flags):
        return self.daemon.virsh(["dumpxml", self.name, *flags]).stdout

    def start(self):
        self.daemon.virsh(["start", self.name], timeout=180)

    def qemu_log(self):
        path = self.daemon.private(f"/var/log/libvirt/qemu/{self.name}.log")
        try:
            with open(path) as f:
                return f.read()
        except OSError:
            return ""

    def qemu_pid(self):
        path = self.daemon.private(f"/run/libvirt/qemu/{self.name}.pid")
        pid = int(open(path).read().strip())
        # Only that QEMU: a stale pid file may name another process.
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            if f"guest={self.name},".encode() not in f.read():
                raise AssertionError(f"pid {pid} is not {self.name}'s QEMU")
        return pid

    def destroy_and_undefine(self):
        self.serial.close()
        state = self.daemon.virsh(["domstate", self.name],
                                  check=False).stdout.strip()
        if state in ("running", "paused"):
            self.daemon.virsh(["destroy", self.name])
        if self.defined:
            self.daemon.virsh(["undefine", self.name, *self.undefine_flags])
            self.defined = False
        p = self.daemon.virsh(["list", "--all", "--name"], check=False)
        if self.name in p.stdout.split():
            raise AssertionError(f"{self.name} still listed:\n{p.stdout}")

    def kill_leftover_qemu(self):
        """Last resort when the daemon died with the domain running."""
        try:
            os.kill(self.qemu_pid(), signal.SIGKILL)
        except (OSError, ValueError, AssertionError):
            pass


class FirmwareDomain(Domain):
    """The native-model domain with nothing to boot, under FIRMWARE:
    "seabios" (the machine's default) or "ovmf" (Debian's, as pflash, with
    a copy of its variables that libvirt keeps).  Its screen stays put:
    SeaBIOS says no bootable device and retries, OVMF ends in its boot
    manager; a reboot comes back to the same screen."""

    def __init__(self, daemon, tmp, firmware):
        super().__init__(daemon, tmp, f"pvdc-{firmware}")
        self.firmware = firmware
        if firmware == "ovmf":
            self.undefine_flags = ["--nvram"]

    def write_xml(self, emulator=None, model=None):
        super().write_xml(emulator, model)
        tree = ET.parse(self.xml_path)
        dom = tree.getroot()
        os_ = dom.find("os")
        for tag in ("kernel", "initrd", "cmdline"):
            os_.remove(os_.find(tag))
        if self.firmware == "ovmf":
            ET.SubElement(os_, "loader", readonly="yes",
                          type="pflash").text = OVMF_CODE
            ET.SubElement(os_, "nvram", template=OVMF_VARS)
        dom.find("on_reboot").text = "restart"
        tree.write(self.xml_path)
        return self.xml_path


class VirtInstallDomain(Domain):
    """A domain that virt-install makes with its defaults for a Debian
    guest and --video pvdc, on the QEMU the daemon finds first on its PATH
    (the project's, as after scripts/install.sh): q35, a new qcow2 disk on
    virtio-blk, created in the default storage pool (virt-install makes
    the pool), xHCI and the USB tablet, a virtio NIC, SPICE graphics with
    its channel and USB redirection, ICH9 sound, the guest agent's channel,
    virtio balloon and RNG.  It boots the test guest from a kernel and
    initramfs, its serial console on a unix socket."""

    # Debian 12 came after the osinfo-db that Debian 12 ships: its newest
    # Debian is 11, whose defaults virt-install then applies.
    OSINFO = "debian11"
    DISK_GIB = 2

    def __init__(self, daemon, tmp, name="pvdc-virt-install"):
        super().__init__(daemon, tmp, name)
        # The disk virt-install created goes with the domain.
        self.undefine_flags = ["--remove-all-storage"]

    def install(self):
        """virt-install creates the disk, defines the domain and starts
        it."""
        boot = self.boot_files()
        self.defined = True
        run(["virt-install", "--connect", self.daemon.uri,
             "--name", self.name, "--osinfo", self.OSINFO,
             "--memory", "1024", "--virt-type", "qemu", "--import",
             "--video", "pvdc", "--disk", f"size={self.DISK_GIB}",
             # A virtual network would need libvirt's network driver and
             # a bridge on the host: user networking is what a daemon
             # without them offers.
             "--network", "user",
             # pvdc.noload: the driver waits for the test, which looks at
             # the boot screen first: the kernel's console in the VESA
             # mode SeaBIOS's ramfb VGA BIOS offers.
             "--boot", f"kernel={boot['kernel']},initrd={boot['initrd']},"
                       "kernel_args=\"console=ttyS0 panic=-1 pvdc.noload "
                       "vga=0x344\"",
             "--serial", f"unix,path={self.serial_path},mode=bind",
             "--noautoconsole"], 300, env=self.daemon.env)


# -- cases -------------------------------------------------------------------

def video_models(daemon, emulator):
    p = daemon.virsh(["domcapabilities", "--emulatorbin", emulator,
                      "--arch", "x86_64", "--machine", "q35",
                      "--virttype", "qemu"])
    caps = ET.fromstring(p.stdout)
    return [v.text for v in caps.findall(
        "devices/video/enum[@name='modelType']/value")]


def domcaps_offer_pvdc(daemon):
    models = video_models(daemon, daemon.qemu)
    if "pvdc" not in models:
        raise AssertionError(f"video models of the pvdc QEMU: {models}")
    print(f"# video models of the pvdc QEMU: {' '.join(models)}")


def domcaps_of_stock_qemu_lack_pvdc(daemon):
    if not os.access(STOCK_QEMU, os.X_OK):
        raise AssertionError(f"{STOCK_QEMU} missing: run "
                             "scripts/setup-host.sh (qemu-system-x86)")
    models = video_models(daemon, STOCK_QEMU)
    # The probe worked (Debian's QEMU has these) and found no pvdc.
    if "pvdc" in models or "bochs" not in models or "vga" not in models:
        raise AssertionError(f"video models of {STOCK_QEMU}: {models}")


def refused(dom, message, **kw):
    """virsh define of the example with KW fails with MESSAGE, and leaves
    no domain behind."""
    p = dom.daemon.virsh(["define", dom.write_xml(**kw)], check=False)
    if p.returncode == 0:
        dom.defined = True
        raise AssertionError(f"defined, although {kw}:\n{p.stdout}")
    if message not in p.stderr:
        raise AssertionError(f"error is not {message!r}:\n{p.stderr}")
    listed = dom.daemon.virsh(["list", "--all", "--name"]).stdout.split()
    if dom.name in listed:
        raise AssertionError(f"{dom.name} exists after a refused define")
    print(f"# {p.stderr.strip().splitlines()[-1]}")


def invalid_values_refused(dom):
    cases = [
        ({"heads": "9"}, "unsupported configuration: video type 'pvdc' "
                         "supports 1 to 8 heads, not 9"),
        ({"heads": "0"}, "supports 1 to 8 heads, not 0"),
        ({"vram": "8192"}, "unsupported configuration: value for 'vram' of "
                           "video type 'pvdc' must be between 16384 and "
                           "2097152 KiB, not 8192"),
        ({"vram": "4194304"}, "must be between 16384 and 2097152 KiB, "
                              "not 4194304"),
        ({"heads": "two"}, "cannot parse video heads 'two'"),
        ({"ram": "65536"}, "ram attribute only supported for video type qxl"),
    ]
    for model, message in cases:
        refused(dom, message, model=model)


def explicit_vram_becomes_vram_size(dom):
    """<model vram='...'/> is passed on; without it QEMU sizes the VRAM."""
    for vram, want in (("131072", 128 << 20), (None, None)):
        p = dom.daemon.virsh(["domxml-to-native", "qemu-argv",
                              dom.write_xml(model={"vram": vram})])
        m = re.search(r"-device '?(\{[^']*\"driver\":\"pvdc\"[^']*\})",
                      p.stdout)
        if not m:
            raise AssertionError(f"no -device pvdc in:\n{p.stdout}")
        got = json.loads(m.group(1)).get("vram-size")
        if got != want:
            raise AssertionError(f"vram={vram}: vram-size is {got}, wants "
                                 f"{want}")


def stock_qemu_refused(dom):
    refused(dom, "unsupported configuration: domain configuration does not "
                 "support video model 'pvdc'", emulator=STOCK_QEMU)


def element_equal(want, got, path):
    """Every attribute, text and child of WANT is in GOT with the same
    value; GOT may have more (libvirt adds addresses, controllers and
    defaults)."""
    for key, value in want.attrib.items():
        if got.get(key) != value:
            raise AssertionError(f"{path}/@{key}: wrote {value!r}, dumpxml "
                                 f"has {got.get(key)!r}")
    if (want.text or "").strip() != (got.text or "").strip():
        raise AssertionError(f"{path}: wrote {want.text!r}, dumpxml has "
                             f"{got.text!r}")
    for child in want:
        where = f"{path}/{child.tag}"
        errors = []
        for candidate in got.findall(child.tag):
            try:
                element_equal(child, candidate, where)
                break
            except AssertionError as e:
                errors.append(e)
        else:
            raise errors[0] if errors else AssertionError(
                f"{where}: not in dumpxml")


def dumpxml_gives_the_xml_back(dom):
    written = ET.parse(dom.xml_path).getroot()
    first = dom.dumpxml("--inactive")
    # The one value libvirt rewrites: the machine alias becomes the
    # versioned machine type it stands for.
    machine = ET.fromstring(first).find("os/type").get("machine")
    if written.find("os/type").get("machine") == "q35" and \
            machine.startswith("pc-q35-"):
        written.find("os/type").set("machine", machine)
    element_equal(written, ET.fromstring(first), "domain")
    video = ET.fromstring(first).find("devices/video")
    model = video.find("model")
    # No vram: libvirt leaves the size to QEMU instead of inventing one.
    if model.attrib != {"type": "pvdc", "heads": "2", "primary": "yes"}:
        raise AssertionError(f"<model> is {model.attrib}")
    addr = video.find("address")
    if addr is None or addr.get("type") != "pci":
        raise AssertionError("libvirt assigned no PCI address:\n" +
                             ET.tostring(video, encoding="unicode"))
    # What libvirt wrote is what it reads: defining the dumped XML again
    # changes nothing.
    again = os.path.join(os.path.dirname(dom.xml_path), "again.xml")
    with open(again, "w") as f:
        f.write(first)
    dom.daemon.virsh(["define", again])
    second = dom.dumpxml("--inactive")
    if second != first:
        raise AssertionError("dumpxml changed after defining its own "
                             "output")
    if QEMU_NS in first or "qemu:commandline" in first:
        raise AssertionError("the domain uses the qemu: namespace")


def pvdc_on_the_assigned_address(dom):
    devices, argv = qemu_devices(dom)
    pvdc = [d for d in devices if d.get("driver") == "pvdc"]
    if len(pvdc) != 1:
        raise AssertionError(f"QEMU's -device list: {devices}")
    dev = pvdc[0]
    # vram-size None: not passed, QEMU derives it
    want = {"heads": HEADS, "vram-size": None, "xres": 1024, "yres": 768}
    got = {k: dev.get(k) for k in want}
    if got != want:
        raise AssertionError(f"-device pvdc has {got}, wants {want}")
    addr = ET.fromstring(dom.dumpxml()).find("devices/video/address")
    slot, function = int(addr.get("slot"), 16), int(addr.get("function"), 16)
    want_addr = f"{slot:#x}" if function == 0 else f"{slot:#x}.{function:#x}"
    if dev.get("addr") != want_addr or not dev.get("bus"):
        raise AssertionError(f"-device pvdc at bus {dev.get('bus')} addr "
                             f"{dev.get('addr')}, dumpxml says {want_addr}")
    if any(a == "-set" or a.startswith("pvdc,") for a in argv):
        raise AssertionError("pvdc passed through by hand")
    print(f"# -device {json.dumps(dev)}")


def not_tainted(dom):
    info = dom.daemon.virsh(["dominfo", dom.name]).stdout
    log = dom.qemu_log()
    for where, text in (("dominfo", info), ("QEMU log", log)):
        if "taint" in text.lower():
            lines = [l for l in text.splitlines() if "taint" in l.lower()]
            raise AssertionError(f"{where}: {lines}")


def guest_boots(dom):
    """The guest's init answers on the serial console.  QEMU drops what the
    guest writes before the test connects, so a missed @@PVDC-READY is
    made up for by a command that init answers once it is up."""
    dom.serial.connect(30)
    deadline = time.monotonic() + BOOT_TIMEOUT
    while True:
        try:
            dom.serial.wait_for(rb"@@PVDC-READY \S+", 10, "@@PVDC-READY")
            return
        except AssertionError:
            pass
        try:
            dom.serial.run("true", timeout=5)
            return
        except AssertionError:
            if dom.serial.eof or time.monotonic() > deadline:
                raise AssertionError(f"the guest did not answer within "
                                     f"{BOOT_TIMEOUT:.0f} s:\n"
                                     f"{dom.serial.tail()}")


def pvdc_driver_binds(dom):
    rc, out = dom.serial.run("i=0; until [ -e /sys/class/drm/card0 ]; do "
                             "[ $i -ge 300 ] && exit 1; i=$((i+1)); "
                             "sleep 0.1; done; basename "
                             "$(readlink /sys/class/drm/card0/device/driver)")
    if rc != 0 or out.split()[-1:] != ["pvdc"]:
        raise AssertionError(f"card0's driver: {out!r}\n{dom.serial.tail()}")


def light_heads(dom):
    """pvdc-modeset shows its colour bars on every head and holds them."""
    rc, out = dom.serial.run("pvdc-modeset 0 >/tmp/modeset.log 2>&1 & "
                             "echo $! >/tmp/modeset.pid; i=0; "
                             "until grep -q '^# holding' /tmp/modeset.log; "
                             "do [ $i -ge 600 ] && exit 1; i=$((i+1)); "
                             "sleep 0.1; done; cat /tmp/modeset.log",
                             timeout=90)
    if rc != 0:
        raise AssertionError(f"pvdc-modeset did not hold its picture:\n{out}")


def screenshot_shows_head(dom, tmp, screen):
    path = os.path.join(tmp, f"screen{screen}.img")
    dom.daemon.virsh(["screenshot", dom.name, path, "--screen", str(screen)])
    pic = read_picture(path)
    ui_clients.expect_head(pic, screen, f"screen {screen}")
    if (pic.width, pic.height) != (1024, 768):
        raise AssertionError(f"screen {screen} is {pic.width}x{pic.height}")


def screenshot_shows_boot_screen(dom, tmp):
    """Before the driver loads, head 0 shows the boot display: the
    kernel's console on vesafb, in the framebuffer SeaBIOS set up.  The
    kernel's messages go to the serial line: the test writes onto the
    console, then takes screenshots until the text is there."""
    rc, out = dom.serial.run("for i in 1 2 3 4; do echo 'pvdc: vesafb draws "
                             "this line into the boot display' > /dev/tty1; "
                             "done; cat /proc/fb")
    if rc != 0 or "VESA VGA" not in out:
        raise AssertionError(f"no vesafb console: {out!r}")
    print(f"# boot screen: {screenshot_until(dom, tmp, shows_text)}")


def screenshot_until(dom, tmp, check, timeout=STEP_TIMEOUT):
    """virsh screenshot of head 0 until CHECK(picture) holds (it raises
    AssertionError until then); what it says it saw."""
    path = os.path.join(tmp, f"{dom.name}-screen0.img")
    deadline = time.monotonic() + timeout
    while True:
        dom.daemon.virsh(["screenshot", dom.name, path, "--screen", "0"])
        try:
            return check(read_picture(path))
        except AssertionError:
            if time.monotonic() > deadline:
                raise


def firmware_screen(dom, tmp):
    """The firmware's own screen on pvdc's head 0 through virsh
    screenshot, checked as tests/guest/test_boot.py checks QEMU's
    screendump of it."""
    failed = None
    try:
        dom.define()
        dom.start()
        seen = screenshot_until(dom, tmp, shows_text, FIRMWARE_TIMEOUT)
        print(f"# {dom.firmware}: {seen}")
    except AssertionError as e:
        failed = e
        for line in dom.qemu_log().splitlines()[-15:]:
            print(f"# | {line}")
    finally:
        dom.destroy_and_undefine()
    if failed:
        raise failed


def pvdc_driver_loads_and_binds(dom):
    rc, out = dom.serial.run("insmod /lib/modules/pvdc.ko")
    if rc != 0:
        raise AssertionError(f"insmod pvdc.ko: {out}")
    pvdc_driver_binds(dom)


def spice_shows_every_head(dom, heads=HEADS):
    graphics = ET.fromstring(dom.dumpxml()).find(
        "devices/graphics[@type='spice']")
    port = int(graphics.get("port"))
    pictures = ui_clients.spice_displays("127.0.0.1", port, heads,
                                         settle=ui_clients.shows_heads)
    for head, pic in enumerate(pictures):
        ui_clients.expect_head(pic, head, f"SPICE display {head}")


def qemu_devices(dom):
    """QEMU's command line: its -device list, and its other arguments."""
    with open(f"/proc/{dom.qemu_pid()}/cmdline", "rb") as f:
        argv = f.read().decode().split("\0")
    devices = [json.loads(argv[i + 1]) for i, a in enumerate(argv[:-1])
               if a == "-device" and argv[i + 1].startswith("{")]
    return devices, argv


def virt_install_defaults(dom):
    """What virt-install chose: q35, its disk a virtio volume of the
    default pool, a virtio NIC on user networking, a USB tablet, SPICE, on
    the QEMU the daemon found; and QEMU runs them."""
    xml = ET.fromstring(dom.dumpxml())
    machine = xml.find("os/type").get("machine")
    disk = xml.find("devices/disk[@device='disk']")
    path = disk.find("source").get("file") if disk is not None else None
    pool = dom.daemon.virsh(["vol-pool", path], check=False).stdout.strip() \
        if path else None
    nic = xml.find("devices/interface")
    got = {"machine": machine.split("-")[1] if machine else None,
           "disk": (disk.find("target").get("bus"),
                    disk.find("driver").get("type"), pool)
           if disk is not None else None,
           "nic": (nic.get("type"), nic.find("model").get("type"))
           if nic is not None else None,
           "tablet": xml.find("devices/input[@type='tablet']") is not None
           and xml.find("devices/input[@type='tablet']").get("bus"),
           "graphics": [g.get("type") for g in xml.findall(
               "devices/graphics")],
           "video": [v.get("type") for v in xml.findall(
               "devices/video/model")],
           "emulator": xml.find("devices/emulator").text}
    want = {"machine": "q35", "disk": ("virtio", "qcow2", "default"),
            "nic": ("user", "virtio"), "tablet": "usb",
            "graphics": ["spice"], "video": ["pvdc"],
            "emulator": dom.daemon.qemu}
    if got != want:
        raise AssertionError(f"virt-install's domain has {got}, wants "
                             f"{want}")
    devices, argv = qemu_devices(dom)
    drivers = {d.get("driver") for d in devices}
    missing = {"virtio-blk-pci", "virtio-net-pci", "usb-tablet",
               "pvdc"} - drivers
    if missing or "-spice" not in argv:
        raise AssertionError(f"QEMU runs without {sorted(missing)}"
                             f"{'' if '-spice' in argv else ' and -spice'}:"
                             f" {' '.join(argv)}")
    print(f"# {xml.find('os/type').get('machine')}, disk {path}, QEMU "
          f"devices {' '.join(sorted(d for d in drivers if d))}")


# virt-install's domain, step by step (a step runs once the ones before
# it passed).
VIRT_INSTALL_STEPS = [
    ("virt-install creates a Debian guest's disk in the default pool, "
     "defines and starts its domain with --video pvdc",
     lambda dom, tmp: dom.install()),
    ("virt-install's defaults are in the domain and QEMU runs them: q35, "
     "virtio disk and NIC, USB tablet, SPICE",
     lambda dom, tmp: virt_install_defaults(dom)),
    ("virt-install's guest boots", lambda dom, tmp: guest_boots(dom)),
    ("virsh screenshot shows the boot screen on virt-install's pvdc head 0 "
     "before the driver loads", screenshot_shows_boot_screen),
    ("the pvdc driver loads and binds in virt-install's guest",
     lambda dom, tmp: pvdc_driver_loads_and_binds(dom)),
    ("pvdc-modeset lights virt-install's pvdc",
     lambda dom, tmp: light_heads(dom)),
    ("virsh screenshot shows virt-install's pvdc head 0",
     lambda dom, tmp: screenshot_shows_head(dom, tmp, 0)),
    ("SPICE shows virt-install's pvdc head 0",
     lambda dom, tmp: spice_shows_every_head(dom, 1)),
]
VIRT_INSTALL_CASES = [name for name, _ in VIRT_INSTALL_STEPS] + \
    ["virt-install's domain and its disk are destroyed and undefined"]


def virt_install_cases(tap, dom, tmp):
    """virt-install makes, defines and starts its domain with all its
    devices on the project's QEMU, the guest boots, and virsh screenshot
    shows the boot screen, then pvdc's picture."""
    failed = tap.failed
    for name, step in VIRT_INSTALL_STEPS:
        if tap.failed > failed:
            tap.skip(name, "an earlier step failed")
            continue
        tap.case(name, step, dom, tmp)
    if tap.failed > failed:
        for line in dom.qemu_log().splitlines()[-15:]:
            print(f"# | {line}")
    tap.case(VIRT_INSTALL_CASES[-1], dom.destroy_and_undefine)


FIRMWARES = {"seabios": "SeaBIOS", "ovmf": "OVMF"}
FIRMWARE_CASES = [f"virsh screenshot shows {name}'s screen on pvdc head 0"
                  for name in FIRMWARES.values()]


def run_cases(tap, tmp):
    daemon = Libvirtd(tmp)
    bad = Domain(daemon, tmp, "pvdc-invalid")
    dom = Domain(daemon, tmp)
    installed = VirtInstallDomain(daemon, tmp)
    firmware = [FirmwareDomain(daemon, tmp, f) for f in FIRMWARES]
    setup_cases = [
        ("domcapabilities offers the pvdc model for the pvdc QEMU",
         domcaps_offer_pvdc, daemon),
        ("domcapabilities of Debian's QEMU do not offer pvdc",
         domcaps_of_stock_qemu_lack_pvdc, daemon),
        ("invalid pvdc values are refused at define time",
         invalid_values_refused, bad),
        ("a pvdc domain on Debian's QEMU is refused at define time",
         stock_qemu_refused, bad),
        ("an explicit vram becomes vram-size, none leaves it to QEMU",
         explicit_vram_becomes_vram_size, bad),
    ]
    running_cases = [
        ("QEMU runs -device pvdc at the PCI address libvirt assigned",
         pvdc_on_the_assigned_address, dom),
        ("the domain is not tainted", not_tainted, dom),
        ("the guest boots", guest_boots, dom),
        ("the pvdc driver binds in the guest", pvdc_driver_binds, dom),
        ("pvdc-modeset lights both heads", light_heads, dom),
        ("virsh screenshot --screen 0 shows head 0",
         screenshot_shows_head, dom, tmp, 0),
        ("virsh screenshot --screen 1 shows head 1",
         screenshot_shows_head, dom, tmp, 1),
        ("SPICE shows every head", spice_shows_every_head, dom),
    ]
    try:
        try:
            daemon.start()
        except (Skip, subprocess.TimeoutExpired) as e:
            print(f"# libvirtd cannot run here: {e}", flush=True)
            for name in ["libvirtd starts with private folders"] + \
                    [c[0] for c in setup_cases] + \
                    ["the native-model domain is defined",
                     "virsh dumpxml gives the domain's XML back",
                     "the domain starts"] + \
                    [c[0] for c in running_cases] + \
                    ["the domain is destroyed and undefined"] + \
                    FIRMWARE_CASES + VIRT_INSTALL_CASES + \
                    ["libvirtd stops"]:
                tap.skip(name, "libvirtd cannot run here (reason above)")
            return
        tap.case("libvirtd starts with private folders", lambda: None)
        try:
            for case in setup_cases:
                tap.case(*case)
            failed = tap.failed
            tap.case("the native-model domain is defined", dom.define)
            if tap.failed == failed:
                tap.case("virsh dumpxml gives the domain's XML back",
                         dumpxml_gives_the_xml_back, dom)
                tap.case("the domain starts", dom.start)
            else:
                for name in ["virsh dumpxml gives the domain's XML back",
                             "the domain starts"]:
                    tap.skip(name, "the domain is not defined")
            if tap.failed > failed:
                for line in dom.qemu_log().splitlines()[-15:]:
                    print(f"# | {line}")
                for case in running_cases:
                    tap.skip(case[0], "the domain did not start")
            else:
                guest_ok = True
                for case in running_cases:
                    if not guest_ok and case[1] is not not_tainted and \
                            case[1] is not pvdc_on_the_assigned_address:
                        tap.skip(case[0], "the guest is not up")
                        continue
                    before = tap.failed
                    tap.case(*case)
                    if tap.failed > before and case[1] in (
                            guest_boots, pvdc_driver_binds, light_heads):
                        guest_ok = False
        finally:
            tap.case("the domain is destroyed and undefined",
                     dom.destroy_and_undefine)
        try:
            for name, fw in zip(FIRMWARE_CASES, firmware):
                tap.case(name, firmware_screen, fw, tmp)
            virt_install_cases(tap, installed, tmp)
        finally:
            tap.case("libvirtd stops", daemon.stop)
    finally:
        for d in [dom, installed] + firmware:
            d.kill_leftover_qemu()
        daemon.stop()


if __name__ == "__main__":
    sys.exit(Tap().run("pvdc-libvirt-", run_cases))
