"""Host-side harness for pvdc guest tests.

Boots the test guest (Debian's Linux 6.12 with the project's initramfs) in
the project's QEMU through QEMU's own qemu.machine.QEMUMachine, which
starts QEMU, speaks QMP to it (screendumps, properties, events), gives it
a console socket, keeps QEMU's own output in its log, and shuts QEMU down
or kills it.  What is pvdc's is here: the guest, and the serial protocol
whose other end is the guest's init, guest-driver/image/init (each line
sent is "<id> <shell command>", answered after the command's output by
"@@PVDC-DONE <id> <exit status>"; "@@PVDC-READY <kernel release>" once
the modules are loaded).  Every step has a timeout: a hung or panicked
guest raises GuestError with the end of the serial log, and QEMU is
killed; nothing here can hang a test run.

PVDC_GUEST_KERNEL=debug (or GuestVM(kernel="debug")) boots the debug kernel
of scripts/build-debug-kernel.sh instead, with its own initramfs; every
timeout is then stretched by its slowdown under TCG, and
kernel_log_reports() finds what its lock, memory and object debugging
reported.
"""

import asyncio
import collections
import contextlib
import fnmatch
import functools
import os
import re
import sys
import tempfile
import threading
import time
import zlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "scripts"))
from pvdc_paths import BUILD, ROOT, qemu_python  # noqa: E402
from pvdc_tap import Tap  # noqa: E402

sys.path.insert(0, qemu_python())
try:
    from qemu.machine import QEMUMachine
    from qemu.machine.machine import (AbnormalShutdown, QEMUMachineError,
                                      VMLaunchFailure)
    from qemu.qmp import QMPError
except ImportError as e:  # no QEMU tree yet: GuestVM() says so
    QEMU_PYTHON_MISSING = e
    QEMUMachine = object
    AbnormalShutdown = QEMUMachineError = VMLaunchFailure = QMPError = \
        OSError
else:
    QEMU_PYTHON_MISSING = None

__all__ = ["BOOT_TIMEOUT", "BUILD", "BackoffCounter", "GuestError", "GuestVM",
           "KERNELS", "KERNEL_LOG_CASE", "MmioAccesses", "MmioReads",
           "Picture", "STEP_TIMEOUT", "Tap", "artefact", "kernel_log_reports",
           "modeset_bars", "modeset_head", "parse_kms_state", "read_picture",
           "read_console", "read_ppm", "register_arrays",
           "register_constants", "run_suite", "search_console"]

# One instruction is a nanosecond of virtual time, a guest idle skips to
# its next timer: a 1 GHz guest whatever the host's speed or load.
ICOUNT = "shift=0,sleep=on"

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


def read_console(owner, sock):
    """The reader thread of a guest's console socket SOCK: appends what
    arrives to OWNER.log, sets OWNER.eof once it closes, and notifies
    OWNER.cond at each."""
    while True:
        try:
            data = sock.recv(65536)
        except OSError:
            data = b""
        with owner.cond:
            if not data:
                owner.eof = True
                owner.cond.notify_all()
                return
            owner.log += data
            owner.cond.notify_all()


def search_console(owner, pattern, timeout, start=0):
    """The first match of PATTERN in OWNER.log (read_console) from START,
    waiting up to TIMEOUT s for it; None once the console has closed or
    the time has run out."""
    deadline = time.monotonic() + timeout
    with owner.cond:
        while True:
            m = pattern.search(owner.log, start)
            if m:
                return m
            left = deadline - time.monotonic()
            if owner.eof or left <= 0:
                return None
            owner.cond.wait(left)


class GuestVM(QEMUMachine):
    """One boot of the test guest.  Use as a context manager.

    QEMUMachine runs QEMU: cmd() and wait_event() speak QMP (a failure or
    a timeout is a GuestError here), QEMU's output goes to its log
    (qemu_log), stop() and kill() end it.  The guest's serial line is
    QEMUMachine's console socket, which run() speaks the protocol of
    guest-driver/image/init on."""

    def __init__(self, devices=None, append="", memory=None,
                 qemu=None, extra_args=None, boot_timeout=BOOT_TIMEOUT,
                 display=None, kernel=None, machine="q35", smp=1,
                 stall_free=False):
        if QEMU_PYTHON_MISSING:
            raise GuestError(f"no python/qemu in {qemu_python()}: build "
                             f"QEMU first ({QEMU_PYTHON_MISSING})")
        super().__init__(qemu or artefact("qemu/qemu-system-x86_64"),
                         name="qemu", base_temp_dir=tempfile.gettempdir())
        self.set_machine(machine)
        # vCPUs: more than one where a suite tests what runs concurrently.
        self.smp = smp
        # The virtual clock counts the guest's instructions (-icount): a
        # host that deschedules QEMU stops the guest's time with it, so
        # that what the device counts (vblanks a flip missed) is what the
        # guest did.  Without it, any guest misses frames on a loaded
        # host.  One thread runs every vCPU, in turn.
        self.stall_free = stall_free
        self.devices = devices if devices is not None else \
            ["-device", "pvdc,id=pvdc0"]
        self.append = append
        self.kernel = guest_kernel(kernel)
        self.memory = memory or self.kernel.memory
        self.extra_args = extra_args or []
        # QEMUMachine's default is -display none.
        self.display = display or []
        self.initramfs = os.environ.get("PVDC_INITRAMFS") or \
            artefact(self.kernel.initramfs)
        self.boot_timeout = boot_timeout
        self.console = None
        self.log = bytearray()
        self.cond = threading.Condition()
        self.eof = False
        self.next_id = 1
        self.kernel_version = None

    # -- life cycle -------------------------------------------------------

    @property
    def slowdown(self):
        return self.kernel.slowdown

    @property
    def tmp(self):
        """A directory of this VM's, removed once QEMU has exited."""
        return self.temp_dir

    @property
    def qemu_log(self):
        """QEMU's own output while it runs: its messages and the trace
        records MmioAccesses reads, never the guest's console."""
        return self._qemu_log_path

    def boot_args(self):
        """What the guest boots: kernel, initrd, command line, disks."""
        return ["-kernel", self.kernel.image, "-initrd", self.initramfs,
                "-append", "console=ttyS0 panic=-1 oops=panic "
                           "loglevel=4 " + self.append]

    def qemu_args(self):
        """QEMU's arguments, besides QEMUMachine's own (machine, QMP
        monitor, console)."""
        return ["-m", self.memory, "-smp", str(self.smp), "-nodefaults",
                "-no-reboot", *self.display, *self.boot_args(),
                ] + (["-icount", ICOUNT] if self.stall_free else []) + \
            self.devices + self.extra_args

    def launch(self):
        """Start QEMU, the guest's console and QMP; do not wait for the
        guest."""
        self.set_console()
        self.add_args(*self.qemu_args())
        try:
            super().launch()
        except VMLaunchFailure as e:
            raise GuestError(f"QEMU did not start (exit status "
                             f"{e.exitcode}):\n{e.output}") from None
        self._qmp.settimeout(STEP_TIMEOUT)
        self.console = self.console_socket
        threading.Thread(target=read_console, args=(self, self.console),
                         daemon=True).start()

    def start(self):
        self.launch()
        self.booted()
        return self

    def booted(self):
        """Wait until the guest's init serves the harness."""
        m = self._wait_for(READY, self.boot_timeout, "boot")
        self.kernel_version = m.group(1).decode()

    def _wait_for(self, pattern, timeout, what, start=0):
        timeout *= self.slowdown
        m = search_console(self, pattern, timeout, start)
        if m:
            return m
        died = self.eof
        self.kill()
        if died:
            raise GuestError(f"guest died during {what}"
                             f"{self.exit_reason()}\n{self.tail()}")
        raise GuestError(f"timeout: {what} did not finish within "
                         f"{timeout:.0f} s; guest killed\n{self.tail()}")

    def exit_reason(self):
        rc = self.exitcode()
        return f" (QEMU exit status {rc})" if rc is not None else ""

    def tail(self, lines=40):
        """The end of the serial log, and of QEMU's own output once QEMU
        has exited (what it said when it died)."""
        text = bytes(self.log).decode(errors="replace").splitlines()
        out = "\n".join("  | " + l for l in text[-lines:])
        qemu = (self.get_log() or "").splitlines()
        if qemu:
            out += "\n  QEMU:\n" + "\n".join("  | " + l
                                               for l in qemu[-lines:])
        return out

    def stop(self):
        """Ask QEMU to quit, or wait for it if it has exited; kill it if it
        does not exit within 10 s."""
        try:
            if self.is_running():
                self.shutdown(timeout=10)
            else:
                self.wait()
        except AbnormalShutdown:
            pass

    def __enter__(self):
        return self.start()

    def __exit__(self, exc_type, exc, tb):
        if exc_type is not None:
            self.kill()
        self.stop()

    def cmd(self, cmd, args_dict=None, conv_keys=None, **args):
        """QEMUMachine.cmd(): the QMP command's return value; its failure,
        or no answer within STEP_TIMEOUT, is a GuestError."""
        try:
            return super().cmd(cmd, args_dict, conv_keys, **args)
        except asyncio.TimeoutError:
            raise GuestError(f"QMP {cmd} did not answer in time") from None
        except (QMPError, QEMUMachineError, OSError, EOFError) as e:
            raise GuestError(f"QMP {cmd}: {e}") from e

    # -- in-guest commands ------------------------------------------------

    def run(self, cmd, timeout=STEP_TIMEOUT):
        """Run a shell command in the guest; return (status, output)."""
        cid = self.next_id
        self.next_id += 1
        with self.cond:
            start = len(self.log)
        try:
            self.console.sendall(f"{cid} {cmd}\n".encode())
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

    def assert_no_leaks(self, code, timeout=STEP_TIMEOUT):
        """kmemleak (the debug kernel's) reports no unreferenced object
        whose report names one of CODE (substrings of function or module
        names)."""
        # Objects freed in a work or an RCU callback need a moment; two
        # scans report only what stayed unreferenced across both.
        self.check("echo scan > /sys/kernel/debug/kmemleak; "
                   "echo scan > /sys/kernel/debug/kmemleak", timeout)
        out = self.check("cat /sys/kernel/debug/kmemleak")
        leaks = [b for b in out.split("unreferenced object")[1:]
                 if any(c in b for c in code)]
        if leaks:
            raise AssertionError(f"{len(leaks)} leak(s):\n" +
                                 "unreferenced object".join(leaks[:3]))

    def run_to_end(self, cmd, pattern, timeout=STEP_TIMEOUT):
        """Send the shell command CMD, after which the guest serves no
        more commands (it panics, or powers off), and wait until the
        serial log shows the regex PATTERN (bytes) after it; return the
        match.  The guest is killed if it does not come."""
        with self.cond:
            start = len(self.log)
        try:
            self.console.sendall(f"{self.next_id} {cmd}\n".encode())
        except OSError:
            self.kill()
            raise GuestError(f"guest died before {cmd!r}"
                             f"{self.exit_reason()}\n{self.tail()}")
        self.next_id += 1
        return self._wait_for(re.compile(pattern), timeout,
                              f"the end of {cmd!r}", start)

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

    def start_background(self, cmd, ready=None, timeout=STEP_TIMEOUT,
                         hold_stdin=False):
        """Start CMD in the guest's background; with READY, wait until its
        output shows that extended regex.  HOLD_STDIN gives it a stdin that
        stays open and empty (a FIFO it holds both ends of), for programs
        that stop at the first key or at end of file.  Return the log path
        in the guest."""
        log = f"/tmp/bg{self.next_id}.log"
        stdin = "</dev/null"
        if hold_stdin:
            self.check(f"mkfifo {log}.in")
            stdin = f"<>{log}.in"
        self.check(f"{cmd} {stdin} >{log} 2>&1 & echo $! >{log}.pid")
        if ready:
            self.wait_for_output(log, ready, timeout)
        return log

    @contextlib.contextmanager
    def holding(self, cmd, ready):
        """Run CMD in the background (start_background, until READY) for
        the with-block; then stop it, and raise AssertionError if it
        reported a failed case."""
        log = self.start_background(cmd, ready)
        try:
            yield log
        finally:
            out = self.stop_background(log)
        if "not ok" in out:
            raise AssertionError(out)

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

    def suspend_to_ram(self):
        """Suspend the guest to RAM through its /sys/power/state and wake
        it through QMP; raise AssertionError unless it went through S3.
        The machine needs S3 enabled (-global ICH9-LPC.disable_s3=0)."""
        # The shell answers once the guest is awake again.
        result = {}
        sleeper = threading.Thread(target=lambda: result.update(
            out=self.run("echo mem > /sys/power/state", 120)))
        sleeper.start()
        self.wait_event("SUSPEND", 60)
        self.cmd("system_wakeup")
        self.wait_event("WAKEUP", 60)
        sleeper.join(120)
        if result.get("out", (1,))[0] != 0:
            raise AssertionError(f"suspend: {result}")
        if "PM: suspend exit" not in self.dmesg():
            raise AssertionError("the guest did not go through S3")

    def suspend_keeps_pictures(self, heads):
        """Suspend to RAM and wake (suspend_to_ram); return once each head
        of HEADS shows the pixels it showed before, or raise
        AssertionError."""
        before = [self.screen(h) for h in heads]
        self.suspend_to_ram()

        def same():
            after = [self.screen(h) for h in heads]
            if all(a.data == b.data and a.width == b.width
                   for a, b in zip(after, before)):
                return True
            raise AssertionError(
                "heads after resume: " +
                ", ".join(f"{a.width}x{a.height}" for a in after))
        self.wait_until("every head shows its pixels again", same)

    def kms_state(self):
        """The DRM core's atomic state of the pvdc device, from debugfs:
        {object id: {"type", "name", key: value..., "size": (w, h)}}.
        Reading it takes the modeset locks but opens no DRM file, so it
        never competes with a client under test for DRM master."""
        out = self.check("for d in /sys/kernel/debug/dri/*; do "
                         "read -r name rest <$d/name; "
                         "[ \"$name\" = pvdc ] && exec cat $d/state; "
                         "done; echo 'no pvdc in debugfs' >&2; exit 1")
        return parse_kms_state(out)

    def wait_event(self, name, timeout):
        """The next QMP event NAME (QEMUMachine.event_wait), within
        TIMEOUT seconds."""
        try:
            return self.event_wait(name, float(timeout))
        except asyncio.TimeoutError:
            raise GuestError(f"QMP event {name} did not come within "
                             f"{timeout:.0f} s") from None

    def wait_until(self, what, probe, timeout=STEP_TIMEOUT, interval=0.05):
        """Call PROBE until it returns a true value and return that; PROBE
        may raise AssertionError to say what it sees meanwhile.  After
        TIMEOUT seconds (stretched by the kernel's slowdown) raise
        GuestError with WHAT and the last reason."""
        timeout *= self.slowdown
        deadline = time.monotonic() + timeout
        while True:
            try:
                result = probe()
                why = "the condition never held"
            except AssertionError as e:
                result, why = None, str(e)
            if result:
                return result
            if time.monotonic() > deadline:
                raise GuestError(f"{what}: not within {timeout:.0f} s: "
                                 f"{why}")
            time.sleep(interval)

    def wait_screen(self, what, check, head=0, timeout=STEP_TIMEOUT):
        """Take screendumps of HEAD until CHECK(picture) stops raising
        AssertionError; return the picture.  The device latches a commit
        at the head's next vblank, so what a client has just done reaches
        the screen a little later, however loaded the host is."""
        def probe():
            pic = self.screen(head)
            check(pic)
            return pic
        return self.wait_until(what, probe, timeout)

    # -- host side ----------------------------------------------------------

    def qom_get(self, prop, path="/machine/peripheral/pvdc0"):
        return self.cmd("qom-get", path=path, property=prop)

    def qom_set(self, prop, value, path="/machine/peripheral/pvdc0"):
        self.cmd("qom-set", path=path, property=prop, value=value)

    def screendump(self, path, device="pvdc0", head=0, fmt="png"):
        self.cmd("screendump", filename=path, device=device, head=head,
                 format=fmt)
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
    # A group of their own: "pvdc" is the driver's tracepoints'.
    GROUP = "pvdc_test"
    EVENTS = {
        "backoff": (f"p:{GROUP}/backoff drm_modeset_backoff comm=$comm",
                    "comm"),
        "atomic": (f"r:{GROUP}/atomic drm_mode_atomic_ioctl ret=$retval:s32",
                   "ret"),
    }

    def __init__(self, vm):
        self.vm = vm

    def start(self):
        t = self.TRACING
        for name, (probe, key) in self.EVENTS.items():
            self.vm.check(f"echo '{probe}' >> {t}/kprobe_events && "
                          f"echo 'hist:keys={key}' > "
                          f"{t}/events/{self.GROUP}/{name}/trigger")

    def stop(self):
        """Remove the probes; return {task: backoffs}, {return value:
        atomic ioctls}."""
        t = self.TRACING
        counts = {}
        for name, (probe, key) in self.EVENTS.items():
            hist = self.vm.check(f"cat {t}/events/{self.GROUP}/{name}/hist")
            counts[name] = {}
            for k, n in re.findall(r"\{\s*%s:\s*(.*?)\s*\}\s*hitcount:"
                                   r"\s*(\d+)" % key, hist):
                if key == "ret":
                    # A sign-extended s32, printed as an unsigned u64.
                    k = (int(k) + 2**63) % 2**64 - 2**63
                counts[name][k] = counts[name].get(k, 0) + int(n)
            self.vm.check(f"echo '!hist:keys={key}' > "
                          f"{t}/events/{self.GROUP}/{name}/trigger && "
                          f"echo '-:{self.GROUP}/{name}' >> {t}/kprobe_events")
        return counts["backoff"], counts["atomic"]


@functools.cache
def _register_header():
    """The register header, the one place the numbers are written."""
    with open(os.path.join(ROOT, "include/hw/display/pvdc-regs.h")) as f:
        return f.read()


def register_constants():
    """{name: value} of every plain numeric PVDC_ macro of the register
    header."""
    return {k: int(v, 0) for k, v in re.findall(
        r"^#define\s+(PVDC_\w+)\s+(0x[0-9a-fA-F]+|\d+)u?\b",
        _register_header(), re.M)}


def register_arrays():
    """{name: (base, stride)} of every register array the header defines
    with literal numbers, as `#define PVDC_REG_X(i) (0x0400 + (i) * 4)`."""
    return {k: (int(base, 0), int(stride, 0)) for k, _, base, stride in
            re.findall(r"^#define\s+(PVDC_\w+)\((\w+)\)\s+"
                       r"\((0x[0-9a-fA-F]+|\d+) \+ \(\2\) \* "
                       r"(0x[0-9a-fA-F]+|\d+)\)",
                       _register_header(), re.M)}


Access = collections.namedtuple("Access", "kind cpu region addr value size")


class MmioAccesses:
    """The accesses to the memory regions whose QEMU names match the
    regular expression REGIONS in full, between start() and stop(), as
    QEMU's memory_region_ops_read and _write trace events see them (KINDS:
    "read", "write" or both): Access(kind, vCPU (-1: QEMU itself), region,
    address, value, size), in the order each vCPU made them.  EVENTS are
    more trace events (names or patterns, as trace-event-set-state takes
    them) switched on with them; stop() counts their records by name in
    self.counted and keeps them, in order, in self.records.  The events are
    switched through QMP and written to the VM's QEMU log
    (GuestVM.qemu_log), never to the console the harness reads."""

    LINE = re.compile(r"memory_region_ops_(read|write) cpu (-?\d+) mr \S+ "
                      r"addr (0x[0-9a-f]+) value (0x[0-9a-f]+) size (\d+) "
                      r"name '([^']*)'")
    # A record of the log back end, after its optional "pid@time:".
    RECORD = re.compile(r"^(?:\d+@[\d.]+:)?(\w+) ")

    def __init__(self, vm, regions, kinds=("read", "write"), events=()):
        self.vm = vm
        self.regions = re.compile(regions)
        self.events = [f"memory_region_ops_{k}" for k in kinds] + \
            list(events)
        self.counted_events = list(events)
        self.kinds = kinds
        self.offset = 0
        self.counted = {}
        self.records = []

    def _switch(self, on):
        for name in self.events:
            self.vm.cmd("trace-event-set-state", name=name, enable=on)

    def start(self):
        # QEMU flushes its log after each trace record.
        self.offset = os.path.getsize(self.vm.qemu_log)
        self._switch(True)

    def stop(self):
        self._switch(False)
        accesses, self.counted, self.records = [], {}, []
        with open(self.vm.qemu_log, errors="replace") as f:
            f.seek(self.offset)
            for line in f:
                m = self.LINE.search(line)
                if m and m.group(1) in self.kinds and \
                        self.regions.fullmatch(m.group(6)):
                    accesses.append(Access(m.group(1), int(m.group(2)),
                                           m.group(6), int(m.group(3), 16),
                                           int(m.group(4), 16),
                                           int(m.group(5))))
                    continue
                m = self.RECORD.match(line)
                if m and any(fnmatch.fnmatchcase(m.group(1), e)
                             for e in self.counted_events):
                    self.counted[m.group(1)] = \
                        self.counted.get(m.group(1), 0) + 1
                    self.records.append(line)
        return accesses


class MmioReads(MmioAccesses):
    """The guest's reads of a PCI device's BAR (by the region's QEMU name)
    between start() and stop(): (vCPU, offset in the BAR, value, size), in
    the order each vCPU made them; reads by QEMU itself (the monitor's xp,
    for one) are left out."""

    def __init__(self, vm, region, qdev_id, bar):
        super().__init__(vm, re.escape(region), kinds=("read",))
        self.qdev_id = qdev_id
        self.bar = bar
        self.base = None

    def bar_address(self):
        """Where the guest placed the BAR (the trace gives addresses)."""
        for bus in self.vm.cmd("query-pci"):
            for dev in bus["devices"]:
                if dev.get("qdev_id") != self.qdev_id:
                    continue
                for region in dev["regions"]:
                    if region["bar"] == self.bar:
                        return region["address"]
        raise GuestError(f"no BAR {self.bar} of {self.qdev_id} in query-pci")

    def start(self):
        self.base = self.bar_address()
        super().start()

    def stop(self):
        reads = [(a.cpu, a.addr - self.base, a.value, a.size)
                 for a in super().stop() if a.cpu >= 0]
        if self.bar_address() != self.base:
            raise GuestError(f"BAR {self.bar} of {self.qdev_id} moved while "
                             "traced")
        return reads


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


KMS_OBJECT = re.compile(r"^(plane|crtc|connector)\[(\d+)\]: (.*)$")
KMS_MODE = re.compile(r'^mode: "[^"]*":((?: -?\d+){10})')


def parse_kms_state(text):
    """The objects of drm_state_info()'s output (debugfs dri/N/state)."""
    objects, current = {}, None
    for line in text.splitlines():
        m = KMS_OBJECT.match(line)
        if m:
            current = {"type": m.group(1), "name": m.group(3)}
            objects[int(m.group(2))] = current
            continue
        if current is None or not line.startswith("\t") or \
                line.startswith("\t\t"):
            continue
        field = line.strip()
        m = KMS_MODE.match(field)
        if m:
            # vrefresh clock hdisplay ... vdisplay ...
            numbers = [int(n) for n in m.group(1).split()]
            current["size"] = (numbers[2], numbers[6])
            continue
        key, sep, value = field.partition("=")
        if sep:
            current[key] = value
    return objects


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


def read_png(path):
    """An 8-bit RGB or RGBA, non-interlaced PNG (QEMU's and libvirt's
    screendumps) as a Picture."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise GuestError(f"{path}: not a PNG")
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length = int.from_bytes(data[pos:pos + 4], "big")
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            idat += body
    if not header or header[8] != 8 or header[9] not in (2, 6) or header[12]:
        raise GuestError(f"{path}: not an 8-bit RGB(A) non-interlaced PNG")
    width = int.from_bytes(header[0:4], "big")
    height = int.from_bytes(header[4:8], "big")
    bpp = 3 if header[9] == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * bpp
    rgb = bytearray()
    prev = bytearray(stride)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if kind == 1:
                line[i] = (line[i] + a) & 0xff
            elif kind == 2:
                line[i] = (line[i] + b) & 0xff
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 0xff
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else b if pb <= pc else c
                line[i] = (line[i] + pred) & 0xff
        prev = line
        if bpp == 3:
            rgb += line
        else:
            for x in range(width):
                rgb += line[x * 4:x * 4 + 3]
    return Picture(width, height, bytes(rgb))


def read_picture(path):
    """A PNG or binary PPM file as a Picture."""
    with open(path, "rb") as f:
        magic = f.read(2)
    return read_ppm(path) if magic == b"P6" else read_png(path)


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


# The colour bars pvdc-modeset shows (guest-driver/tests/pvdc-kms-util.c,
# kms_buffer_fill), as 0xRRGGBB.  Head h shows them shifted by h (front
# buffer 0) or h + 4 (front buffer 1), so a picture tells which head it is.
MODESET_BARS = [0xffffff, 0xffff00, 0x00ffff, 0x00ff00,
                0xff00ff, 0xff0000, 0x0000ff, 0x000000]


def modeset_head(pic):
    """Which head's pvdc-modeset colour bars PIC shows; raises when it does
    not show them (each bar sampled at its centre, every 37 rows)."""
    if pic.width < 64 or pic.height < 64:
        raise GuestError(f"picture is {pic.width}x{pic.height}")
    seen = []
    for bar in range(8):
        x = (2 * bar + 1) * pic.width // 16
        colours = {pic.xrgb(x, y) for y in range(0, pic.height, 37)}
        if len(colours) != 1:
            raise GuestError(f"bar {bar} is not uniform: "
                             f"{sorted(map(hex, colours))}")
        seen.append(colours.pop())
    if seen[0] not in MODESET_BARS:
        raise GuestError(f"not the colour bars: {list(map(hex, seen))}")
    phase = MODESET_BARS.index(seen[0])
    if seen != [MODESET_BARS[(phase + i) % 8] for i in range(8)]:
        raise GuestError(f"not the colour bars: {list(map(hex, seen))}")
    return phase % 4


def modeset_bars(head):
    """A check for GuestVM.wait_screen: the picture shows HEAD's
    pvdc-modeset colour bars (AssertionError until it does)."""
    def check(pic):
        try:
            shown = modeset_head(pic)
        except GuestError as e:
            raise AssertionError(f"head {head}: {e}") from None
        if shown != head:
            raise AssertionError(f"head {head} shows head {shown}'s "
                                 "colour bars")
    return check


def never_rejected(tap, vm, name, run):
    """Run @run(); the device refuses no commit meanwhile."""
    before = vm.qom_get("x-commits-rejected")
    applied = vm.qom_get("x-commits-applied")
    run()

    def check():
        rejected = vm.qom_get("x-commits-rejected") - before
        done = vm.qom_get("x-commits-applied") - applied
        print(f"# device: {done} head commits applied, {rejected} rejected")
        if rejected or not done:
            raise AssertionError(f"{done} applied, {rejected} rejected")
    tap.case(name, check)


# The case every suite ends with (GuestVM.check_kernel_log).
KERNEL_LOG_CASE = ("the kernel log has no lockdep, KASAN, UBSAN, ODEBUG, "
                   "WARN, BUG or sleeping-in-atomic report")


def guest_cases(tap, vm, body, boots="guest boots on pvdc",
                responsive="the guest stays responsive"):
    """Start VM, call BODY() and stop VM.  A guest that does not boot (the
    case BOOTS), or stops answering (RESPONSIVE), is a failed case."""
    try:
        vm.start()
    except GuestError as e:
        vm.stop()
        tap.fail(boots, e)
        return
    try:
        body()
    except GuestError as e:
        tap.fail(responsive, e)
    finally:
        vm.stop()


def run_suite(body, heads=2, device=None, append="", s3=False, smp=1):
    """Boot the test guest on a HEADS-head pvdc (or on the -device DEVICE),
    with APPEND on the kernel command line, SMP vCPUs and, if S3, suspend
    to RAM enabled (GuestVM.suspend_to_ram), run BODY(tap, vm) and print
    its cases as TAP; return the exit status.  A guest that does not boot,
    or stops answering, is a failed case."""
    tap = Tap()
    extra = []
    if s3:
        extra = ["-global", "ICH9-LPC.disable_s3=0"]
        # After S3 the ACPI PM timer reads a constant until the firmware
        # sets it up again, which this guest's does not: the TSC keeps time.
        append = f"{append} tsc=reliable clocksource=tsc".strip()
    vm = GuestVM(devices=["-device", device or f"pvdc,id=pvdc0,heads={heads}"],
                 extra_args=extra, append=append, smp=smp)
    guest_cases(tap, vm, lambda: body(tap, vm))
    return tap.done()
