"""Host-side harness for pvdc guest tests.

Boots the test guest (Debian's Linux 6.12 with the project's initramfs) in
the project's QEMU, runs in-guest programs over the serial console, and
speaks QMP for screendumps, properties and events.  Every step has a
timeout: a hung or panicked guest raises GuestError with the end of the
serial log, and QEMU is killed; nothing here can hang a test run.

PVDC_GUEST_KERNEL=debug (or GuestVM(kernel="debug")) boots the debug kernel
of scripts/build-debug-kernel.sh instead, with its own initramfs; every
timeout is then stretched by its slowdown under TCG, and
kernel_log_reports() finds what its lock, memory and object debugging
reported.
"""

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("PVDC_BUILD", os.path.join(ROOT, "build"))

BOOT_TIMEOUT = float(os.environ.get("PVDC_BOOT_TIMEOUT", "120"))
STEP_TIMEOUT = float(os.environ.get("PVDC_STEP_TIMEOUT", "60"))


class Kernel:
    """A guest kernel the harness can boot: its image, release, initramfs
    and how much slower than Debian's it runs (timeouts are multiplied by
    it; they bound waits for real events, nothing sleeps for them)."""

    def __init__(self, name, root, version_file, initramfs, slowdown,
                 memory):
        self.name = name
        self.root, self.version_file = root, version_file
        self.initramfs, self.slowdown, self.memory = \
            initramfs, slowdown, memory

    @property
    def release(self):
        with open(artefact(self.version_file)) as f:
            return f.read().strip()

    @property
    def image(self):
        return os.path.join(os.path.realpath(artefact(self.root)),
                            f"boot/vmlinuz-{self.release}")


KERNELS = {
    # Debian's linux-image-6.12 (scripts/fetch-kernel.sh).
    "stock": Kernel("stock", "kernel", "kernel-version",
                    "meson/initramfs.gz", 1, "512"),
    # lockdep, ww-mutex slowpath injection, KASAN, UBSAN, debug objects:
    # several times slower under TCG, and KASAN's shadow takes memory.
    "debug": Kernel("debug", "kernel-debug", "kernel-debug-version",
                    "meson/initramfs-debug.gz",
                    float(os.environ.get("PVDC_DEBUG_SLOWDOWN", "4")), "1024"),
}


def guest_kernel(name=None):
    name = name or os.environ.get("PVDC_GUEST_KERNEL", "stock")
    if name not in KERNELS:
        raise GuestError(f"unknown guest kernel {name!r} "
                         f"(one of {', '.join(KERNELS)})")
    return KERNELS[name]


# What the kernel's debugging options print when they find something, by
# kind.  Each pattern matches the first line of one report.
KERNEL_REPORTS = [
    ("lockdep", r"WARNING: (possible circular locking dependency|"
                r"possible recursive locking|inconsistent lock state|"
                r"suspicious RCU usage|bad unlock balance|"
                r"held lock freed|lock held when returning|"
                r"possible irq lock inversion|"
                r".*-safe -> .*-unsafe lock order)"
                r"|BUG: (MAX_LOCKDEP|looking up invalid subclass)"
                r"|DEBUG_LOCKS_WARN_ON"),
    ("KASAN", r"BUG: KASAN:"),
    ("UBSAN", r"UBSAN:"),
    ("sleeping in atomic context",
     r"BUG: (sleeping function called from invalid context|"
     r"scheduling while atomic)"),
    ("ODEBUG", r"ODEBUG:"),
    ("list corruption", r"list_(add|del) corruption"),
    ("WARN", r"WARNING: CPU: \d+ PID: \d+"),
    ("BUG", r"kernel BUG at|BUG: (?!KASAN:|sleeping function|"
            r"scheduling while atomic|MAX_LOCKDEP)"),
    ("oops", r"Oops:|general protection fault"),
    ("hang", r"blocked for more than \d+ seconds|soft lockup|"
             r"rcu_(sched|preempt) detected stalls"),
]


def kernel_log_reports(log):
    """The report lines of the kernel log LOG, as (kind, line) pairs."""
    found = []
    for line in log.splitlines():
        for kind, pattern in KERNEL_REPORTS:
            if re.search(pattern, line):
                found.append((kind, line.strip()))
                break
    return found

READY = re.compile(rb"@@PVDC-READY (\S+)\r?\n")


class GuestError(Exception):
    """The guest did not do what was asked in time, or died."""


def artefact(name):
    path = os.path.join(BUILD, name)
    if not os.path.exists(path):
        raise GuestError(f"missing {path}: build the project first "
                         "(scripts/test.sh does)")
    return path


class QMP:
    """A minimal QMP client: commands and the events seen meanwhile."""

    def __init__(self, path, timeout):
        deadline = time.monotonic() + timeout
        while True:
            try:
                self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                self.sock.connect(path)
                break
            except OSError:
                self.sock.close()
                if time.monotonic() > deadline:
                    raise GuestError(f"QMP socket {path} did not appear")
                time.sleep(0.05)
        self.sock.settimeout(timeout)
        self.file = self.sock.makefile("rb")
        self.events = []
        self._recv()  # greeting
        self.command("qmp_capabilities")

    def _recv(self):
        try:
            line = self.file.readline()
        except socket.timeout:
            raise GuestError("QMP did not answer in time")
        if not line:
            raise GuestError("QMP connection closed (QEMU exited)")
        return json.loads(line)

    def command(self, name, **args):
        msg = {"execute": name}
        if args:
            msg["arguments"] = args
        self.sock.sendall(json.dumps(msg).encode() + b"\n")
        while True:
            resp = self._recv()
            if "event" in resp:
                self.events.append(resp)
                continue
            if "error" in resp:
                raise GuestError(f"QMP {name}: {resp['error']['desc']}")
            return resp.get("return")

    def wait_event(self, name, timeout):
        deadline = time.monotonic() + timeout
        while True:
            for i, ev in enumerate(self.events):
                if ev["event"] == name:
                    return self.events.pop(i)
            left = deadline - time.monotonic()
            if left <= 0:
                raise GuestError(f"QMP event {name} did not come in time")
            self.sock.settimeout(left)
            try:
                resp = self._recv()
            finally:
                self.sock.settimeout(STEP_TIMEOUT)
            if "event" in resp:
                self.events.append(resp)

    def close(self):
        self.sock.close()


class GuestVM:
    """One boot of the test guest.  Use as a context manager."""

    def __init__(self, devices=None, append="", memory=None,
                 qemu=None, extra_args=None, boot_timeout=BOOT_TIMEOUT,
                 display=None, kernel=None):
        self.devices = devices if devices is not None else \
            ["-device", "pvdc,id=pvdc0"]
        self.append = append
        self.kernel = guest_kernel(kernel)
        self.memory = memory or self.kernel.memory
        self.qemu = qemu or artefact("qemu/qemu-system-x86_64")
        self.extra_args = extra_args or []
        self.display = display or ["-display", "none"]
        self.initramfs = os.environ.get("PVDC_INITRAMFS") or \
            artefact(self.kernel.initramfs)
        self.boot_timeout = boot_timeout
        self.proc = None
        self.qmp = None
        self.log = bytearray()
        self.cond = threading.Condition()
        self.eof = False
        self.next_id = 1
        self.kernel_version = None
        self.tmp = tempfile.mkdtemp(prefix="pvdc-guest-")

    # -- life cycle -------------------------------------------------------

    @property
    def slowdown(self):
        return self.kernel.slowdown

    def command_line(self):
        return [self.qemu, "-M", "q35", "-m", self.memory, "-nodefaults",
                "-no-reboot", "-vga", "none", *self.display,
                "-kernel", self.kernel.image, "-initrd", self.initramfs,
                "-append", "console=ttyS0 panic=-1 oops=panic "
                           "loglevel=4 " + self.append,
                "-serial", "stdio", "-monitor", "none",
                "-qmp", f"unix:{self.tmp}/qmp.sock,server=on,wait=off",
                ] + self.devices + self.extra_args

    def start(self):
        self.proc = subprocess.Popen(self.command_line(),
                                     stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT,
                                     start_new_session=True)
        threading.Thread(target=self._reader, daemon=True).start()
        self.qmp = QMP(f"{self.tmp}/qmp.sock", STEP_TIMEOUT)
        m = self._wait_for(READY, self.boot_timeout, "boot")
        self.kernel_version = m.group(1).decode()
        return self

    def _reader(self):
        fd = self.proc.stdout.fileno()
        while True:
            data = os.read(fd, 65536)
            with self.cond:
                if not data:
                    self.eof = True
                    self.cond.notify_all()
                    return
                self.log += data
                self.cond.notify_all()

    def _wait_for(self, pattern, timeout, what, start=0):
        timeout *= self.slowdown
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                m = pattern.search(self.log, start)
                if m:
                    return m
                if self.eof:
                    self.kill()
                    raise GuestError(f"guest died during {what}"
                                     f"{self.exit_reason()}\n{self.tail()}")
                left = deadline - time.monotonic()
                if left <= 0:
                    self.kill()
                    raise GuestError(f"timeout: {what} did not finish within "
                                     f"{timeout:.0f} s; guest killed\n"
                                     f"{self.tail()}")
                self.cond.wait(left)

    def exit_reason(self):
        rc = self.proc.poll() if self.proc else None
        return f" (QEMU exit status {rc})" if rc is not None else ""

    def tail(self, lines=40):
        text = bytes(self.log).decode(errors="replace").splitlines()
        return "\n".join("  | " + l for l in text[-lines:])

    def kill(self):
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()

    def stop(self):
        if self.qmp:
            if self.proc and self.proc.poll() is None:
                try:
                    self.qmp.command("quit")
                except (GuestError, OSError):
                    pass
            self.qmp.close()
            self.qmp = None
        if self.proc:
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.kill()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def __enter__(self):
        return self.start()

    def __exit__(self, exc_type, exc, tb):
        if exc_type is not None:
            self.kill()
        self.stop()

    # -- in-guest commands ------------------------------------------------

    def run(self, cmd, timeout=STEP_TIMEOUT):
        """Run a shell command in the guest; return (status, output)."""
        cid = self.next_id
        self.next_id += 1
        with self.cond:
            start = len(self.log)
        try:
            self.proc.stdin.write(f"{cid} {cmd}\n".encode())
            self.proc.stdin.flush()
        except OSError:
            self.kill()
            raise GuestError(f"guest died before {cmd!r}"
                             f"{self.exit_reason()}\n{self.tail()}")
        pat = re.compile(rb"@@PVDC-DONE %d (\d+)\r?\n" % cid)
        m = self._wait_for(pat, timeout, f"guest command {cmd!r}", start)
        out = bytes(self.log[start:m.start()]).decode(errors="replace")
        return int(m.group(1)), out.replace("\r\n", "\n")

    def check(self, cmd, timeout=STEP_TIMEOUT):
        rc, out = self.run(cmd, timeout)
        if rc != 0:
            raise GuestError(f"guest command {cmd!r} exited {rc}:\n{out}")
        return out

    def poll(self, condition, timeout=STEP_TIMEOUT):
        """Wait in the guest until the shell CONDITION holds, checking every
        0.1 s for at most TIMEOUT seconds; return whether it did.  The
        bound is the guest's clock, not a number of checks: on a loaded
        host one check of a condition can take longer than 0.1 s."""
        limit = int(timeout * self.slowdown * 100)
        # Centiseconds of uptime ("1${frac} - 100": no octal for "0x").
        now = "read u x </proc/uptime; echo $((${u%.*} * 100 + 1${u#*.} - 100))"
        rc, _ = self.run(f"now() {{ {now}; }}; end=$(($(now) + {limit})); "
                         f"until {condition}; do "
                         f"[ $(now) -ge $end ] && exit 1; sleep 0.1; done",
                         timeout + 30)
        return rc == 0

    def wait_for_output(self, log, regex, timeout=STEP_TIMEOUT):
        """Wait until the guest file LOG shows the extended regex REGEX;
        return its content."""
        if not self.poll(f"grep -Eq '{regex}' {log}", timeout):
            raise GuestError(f"{regex!r} not in {log} within {timeout:.0f} "
                             f"s:\n{self.run('cat ' + log)[1][-3000:]}")
        return self.run(f"cat {log}")[1]

    def start_background(self, cmd, ready, timeout=STEP_TIMEOUT):
        """Start CMD in the guest's background and wait until its output
        shows the extended regex READY; return the log path in the guest."""
        log = f"/tmp/bg{self.next_id}.log"
        self.check(f"{cmd} >{log} 2>&1 & echo $! >{log}.pid")
        self.wait_for_output(log, ready, timeout)
        return log

    def stop_background(self, log, timeout=30):
        """Stop a program started by start_background, wait until it has
        really exited (its file descriptors closed), return its output."""
        pid = f"$(cat {log}.pid)"
        self.run(f"kill {pid} 2>/dev/null")
        if not self.poll(f"! kill -0 {pid} 2>/dev/null", timeout):
            raise GuestError(f"background program of {log} did not exit")
        return self.run(f"cat {log}")[1]

    def dmesg(self):
        return self.check("dmesg")

    def check_kernel_log(self):
        """Raise AssertionError if the kernel reported anything: lockdep,
        KASAN, UBSAN, debug objects, sleeping in atomic context, WARN, BUG,
        oops or a hang.  On the debug kernel, lockdep must also still be
        on: it turns itself off after its first report or when it runs
        out of room, and would then miss the next ones."""
        log = self.dmesg()
        reports = kernel_log_reports(log)
        if reports:
            kinds = sorted({k for k, _ in reports})
            lines = [f"{k}: {l}" for k, l in reports[:20]]
            raise AssertionError(f"{len(reports)} kernel report(s) "
                                 f"({', '.join(kinds)}):\n" +
                                 "\n".join(lines) + "\n" +
                                 kernel_log_context(log, reports[0][1]))
        rc, stats = self.run("cat /proc/lockdep_stats")
        if rc == 0 and not re.search(r"^\s*debug_locks:\s+1$", stats, re.M):
            raise AssertionError("lockdep is off (debug_locks is not 1):\n"
                                 + stats)

    # -- host side ----------------------------------------------------------

    def qom_get(self, prop, path="/machine/peripheral/pvdc0"):
        return self.qmp.command("qom-get", path=path, property=prop)

    def qom_set(self, prop, value, path="/machine/peripheral/pvdc0"):
        self.qmp.command("qom-set", path=path, property=prop, value=value)

    def screendump(self, path, device="pvdc0", head=0, fmt="png"):
        self.qmp.command("screendump", filename=path, device=device,
                         head=head, format=fmt)
        return path

    def screen(self, head=0, device="pvdc0"):
        """The head's picture, as a Picture."""
        path = self.screendump(os.path.join(self.tmp, f"head{head}.ppm"),
                               device, head, "ppm")
        return read_ppm(path)


class BackoffCounter:
    """Counts, in the guest, the wait/wound backoffs of the DRM atomic
    locking (calls of drm_modeset_backoff(), by task name) and the return
    values of the atomic ioctl, with kprobe events and histogram triggers
    (the debug kernel's KPROBE_EVENTS and HIST_TRIGGERS; no driver change).
    A trigger alone keeps the events out of the trace buffer."""

    TRACING = "/sys/kernel/debug/tracing"
    EVENTS = {
        "backoff": ("p:pvdc/backoff drm_modeset_backoff comm=$comm", "comm"),
        "atomic": ("r:pvdc/atomic drm_mode_atomic_ioctl ret=$retval:s32",
                   "ret"),
    }

    def __init__(self, vm):
        self.vm = vm

    def start(self):
        t = self.TRACING
        for name, (probe, key) in self.EVENTS.items():
            self.vm.check(f"echo '{probe}' >> {t}/kprobe_events && "
                          f"echo 'hist:keys={key}' > "
                          f"{t}/events/pvdc/{name}/trigger")

    def stop(self):
        """Remove the probes; return {task: backoffs}, {return value:
        atomic ioctls}."""
        t = self.TRACING
        counts = {}
        for name, (probe, key) in self.EVENTS.items():
            hist = self.vm.check(f"cat {t}/events/pvdc/{name}/hist")
            counts[name] = {}
            for k, n in re.findall(r"\{\s*%s:\s*(.*?)\s*\}\s*hitcount:"
                                   r"\s*(\d+)" % key, hist):
                if key == "ret":
                    # A sign-extended s32, printed as an unsigned u64.
                    k = (int(k) + 2**63) % 2**64 - 2**63
                counts[name][k] = counts[name].get(k, 0) + int(n)
            self.vm.check(f"echo '!hist:keys={key}' > "
                          f"{t}/events/pvdc/{name}/trigger && "
                          f"echo '-:pvdc/{name}' >> {t}/kprobe_events")
        return counts["backoff"], counts["atomic"]


def kernel_log_context(log, first, before=5, most=150):
    """The report that starts at the line FIRST of LOG, for a failure
    message: up to its closing line (KASAN and UBSAN close with a rule,
    WARN with "end trace"), at most MOST lines."""
    lines = log.splitlines()
    for i, line in enumerate(lines):
        if line.strip() != first:
            continue
        end = min(len(lines), i + most)
        for j in range(i + 2, end):
            if re.search(r"^\s*(\[[ \d.]+\] )?={20,}$|---\[ end trace",
                         lines[j]):
                end = j + 1
                break
        return "\n".join("  | " + l for l in lines[max(0, i - before):end])
    return ""


def read_ppm(path):
    with open(path, "rb") as f:
        data = f.read()
    fields, pos = [], 0
    while len(fields) < 4:
        while data[pos:pos + 1].isspace():
            pos += 1
        start = pos
        while not data[pos:pos + 1].isspace():
            pos += 1
        fields.append(data[start:pos])
    if fields[0] != b"P6" or fields[3] != b"255":
        raise GuestError(f"{path}: not a binary 8-bit PPM")
    return Picture(int(fields[1]), int(fields[2]), data[pos + 1:])


class Picture:
    """An RGB picture from a screendump."""

    def __init__(self, width, height, data):
        if len(data) < width * height * 3:
            raise GuestError("screendump shorter than its size")
        self.width, self.height, self.data = width, height, data

    def pixel(self, x, y):
        """(r, g, b) at x, y."""
        i = (y * self.width + x) * 3
        return tuple(self.data[i:i + 3])

    def xrgb(self, x, y):
        r, g, b = self.pixel(x, y)
        return (r << 16) | (g << 8) | b


def _raise(error):
    raise error


class Tap:
    """Prints TAP for a group of cases; every case reports, whatever fails."""

    def __init__(self):
        self.n = 0
        self.failed = 0

    def case(self, name, fn, *args):
        self.n += 1
        try:
            fn(*args)
        except Exception as e:  # noqa: BLE001 - report every failure
            self.failed += 1
            print(f"not ok {self.n} - {name}")
            for line in str(e).splitlines() or [type(e).__name__]:
                print(f"# {line}")
        else:
            print(f"ok {self.n} - {name}")
        sys.stdout.flush()

    def fail(self, name, error):
        """Report a case that could not even run (the guest did not boot)."""
        self.case(name, _raise, error)

    def skip(self, name, why):
        self.n += 1
        print(f"ok {self.n} - {name} # SKIP {why}")
        sys.stdout.flush()

    def done(self):
        print(f"1..{self.n}")
        return 1 if self.failed else 0


# The case every suite ends with (GuestVM.check_kernel_log).
KERNEL_LOG_CASE = ("the kernel log has no lockdep, KASAN, UBSAN, ODEBUG, "
                   "WARN, BUG or sleeping-in-atomic report")


def run_suite(body, heads=2):
    """Boot the test guest on a HEADS-head pvdc, run BODY(tap, vm) and
    print its cases as TAP; return the exit status.  A guest that does not
    boot, or stops answering, is a failed case."""
    tap = Tap()
    vm = GuestVM(devices=["-device", f"pvdc,id=pvdc0,heads={heads}"])
    try:
        vm.start()
    except GuestError as e:
        tap.fail("guest boots on pvdc", e)
        return tap.done()
    try:
        body(tap, vm)
    except GuestError as e:
        tap.fail("the guest stays responsive", e)
    finally:
        vm.stop()
    return tap.done()
