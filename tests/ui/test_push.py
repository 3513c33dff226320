#!/usr/bin/python3
"""A UI gets every frame the guest flips (TAP).

The test guest runs on pvdc with the D-Bus display on a private bus, and a
listener of our own (the org.qemu.Display1.Listener interface, through
python3-gi) registered on head 0's console receives its Scanout and Update
calls, keeps the picture they draw and counts the distinct frames: calls
after which the picture differs from the one before.  In the guest,
pvdc-flipbench flips head 0 between two buffers at the mode's refresh:

- with an overlay plane over the flipping primary: a scene of two planes,
  which pvdc composes at each latch;
- with the primary alone: one full-screen buffer.  The driver's buffers
  are guest pages scattered in the host; the guest's RAM is a
  memory-backend-memfd, so that pvdc maps each bound buffer once at
  consecutive host addresses and hands the listener that surface, a new
  one at each flip, without composing or copying a pixel (the direct
  path: x-head0-compositions and x-bounce-bytes stay put).

The frames latched are the device's own count (x-commits-applied, read
before and after); the listener must receive at least 95 % of them as
distinct frames, which the UI's own refresh (every 30 ms) could not give
at the mode's refresh rate.  Waits are bounded and end on what the
listener received, not on a clock.
"""

import os
import socket
import sys
import threading

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "scripts"))
from pvdc_paths import ROOT  # noqa: E402
sys.path.insert(0, os.path.join(ROOT, "tests", "guest"))
sys.path.insert(0, os.path.join(ROOT, "tests", "ui"))
from pvdc_harness import GuestVM, Tap, artefact  # noqa: E402
import ui_clients  # noqa: E402
from ui_clients import PIXMAN_XRGB  # noqa: E402

# A small mode keeps each frame's Scanout call (the whole picture) cheap
# for the listener on a loaded machine.
DEVICE = ["-device", "pvdc,id=pvdc0,heads=1,xres=320,yres=240"]
FLIPS = 240
DELIVERED = 0.95
DRAIN_TIMEOUT = 30
# Guest RAM a file pvdc can map the pages of a buffer from, at consecutive
# host addresses, once per buffer.
MEMORY = 512
MEMFD_RAM = ["-object", f"memory-backend-memfd,id=ram0,size={MEMORY}M",
             "-machine", "memory-backend=ram0"]


class FrameCounter:
    """A D-Bus display listener on one console that counts the distinct
    pictures it is given, on a GLib main context of its own thread."""

    def __init__(self, bus, console_path, interface_xml):
        from gi.repository import Gio, GLib
        self.lock = threading.Condition()
        self.stride = 0
        self.last = None            # the last picture, its bytes
        self.distinct = 0
        self.calls = 0
        self.errors = []
        self.stop = False
        self.ctx = GLib.MainContext.new()
        info = Gio.DBusNodeInfo.new_for_xml(interface_xml)
        self.iface = info.lookup_interface("org.qemu.Display1.Listener")
        if self.iface is None:
            raise AssertionError("no org.qemu.Display1.Listener interface")
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        fd_list = Gio.UnixFDList.new()
        fd_list.append(theirs.fileno())
        bus.conn.call_with_unix_fd_list_sync(
            "org.qemu", console_path, "org.qemu.Display1.Console",
            "RegisterListener", GLib.Variant("(h)", (0,)),
            None, 0, 5000, fd_list, None)
        theirs.close()
        self.ctx.push_thread_default()
        try:
            stream = Gio.Socket.new_from_fd(
                ours.detach()).connection_factory_create_connection()
            self.conn = Gio.DBusConnection.new_sync(
                stream, None, Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT,
                None, None)
            self.conn.register_object("/org/qemu/Display1/Listener",
                                      self.iface, self._call,
                                      self._property, None)
        finally:
            self.ctx.pop_thread_default()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while not self.stop:
            self.ctx.iteration(True)

    def _property(self, conn, sender, path, iface, name):
        from gi.repository import GLib
        if name == "Interfaces":
            # No shared memory: every picture comes in the calls.
            return GLib.Variant("as", [])
        return None

    def _call(self, conn, sender, path, iface, method, params, inv):
        if method == "Scanout":
            width, height, stride, fmt = (params.get_child_value(i).unpack()
                                          for i in range(4))
            data = params.get_child_value(4).get_data_as_bytes().get_data()
            with self.lock:
                if fmt not in PIXMAN_XRGB:
                    self.errors.append(f"Scanout in format {fmt:#x}")
                self.stride = stride
                self._count(data)
        elif method == "Update":
            x, y, w, h, stride, fmt = (params.get_child_value(i).unpack()
                                       for i in range(6))
            data = params.get_child_value(6).get_data_as_bytes().get_data()
            with self.lock:
                if self.last is not None:
                    fb = bytearray(self.last)
                    for row in range(h):
                        at = (y + row) * self.stride + x * 4
                        fb[at:at + w * 4] = \
                            data[row * stride:row * stride + w * 4]
                    self._count(bytes(fb))
        inv.return_value(None)

    def _count(self, picture):
        """A call drew PICTURE (bytes), whole."""
        self.calls += 1
        if picture != self.last:
            self.distinct += 1
            self.last = picture
            self.lock.notify_all()

    def frames(self):
        with self.lock:
            return self.distinct

    def wait_frames(self, want, timeout=DRAIN_TIMEOUT):
        """Wait until WANT distinct frames have arrived (a bounded wait for
        the calls already sent); return how many did."""
        with self.lock:
            self.lock.wait_for(lambda: self.distinct >= want, timeout)
            return self.distinct

    def close(self):
        self.stop = True
        self.ctx.wakeup()
        self.thread.join(timeout=10)


def delivered(vm, counter, args, what):
    """Run pvdc-flipbench ARGS, check the listener got >= 95 % of the
    frames the device latched meanwhile; return (received, latched)."""
    frames0 = counter.frames()
    applied0 = vm.qom_get("x-commits-applied")
    pushes0 = vm.qom_get("x-console0-pushes")
    out = vm.check(f"pvdc-flipbench -k 1 -n {FLIPS} {args}", 300)
    if f"flips={FLIPS} " not in out:
        raise AssertionError(f"flipbench:\n{out}")
    latched = vm.qom_get("x-commits-applied") - applied0
    pushes = vm.qom_get("x-console0-pushes") - pushes0
    want = int(latched * DELIVERED + 0.999)
    got = counter.wait_frames(frames0 + want) - frames0
    rate = [line for line in out.splitlines() if "flips_per_s=" in line]
    print(f"# {what}: {latched} frames latched, {pushes} pushed, {got} "
          f"distinct frames received; {rate[0] if rate else out}")
    if counter.errors:
        raise AssertionError(f"listener: {counter.errors}")
    if latched < FLIPS:
        raise AssertionError(f"{latched} commits latched for {FLIPS} flips")
    # The UI's own refresh (every 30 ms) catches up with a guest slower
    # than itself: the device says each frame was pushed at its latch.
    if pushes < want:
        raise AssertionError(f"{what}: {pushes} frames pushed of {latched} "
                             f"latched, want >= {want}")
    if got < want:
        raise AssertionError(f"{what}: {got} distinct frames received of "
                             f"{latched} latched, want >= {want}")
    return got, latched


def composed_scene(vm, counter):
    compositions = vm.qom_get("x-head0-compositions")
    delivered(vm, counter, "-o", "two planes")
    # Composed at each latch: at least one composition per frame.
    composed = vm.qom_get("x-head0-compositions") - compositions
    if composed < FLIPS * DELIVERED:
        raise AssertionError(f"{composed} compositions for {FLIPS} flips")


def single_plane_flips(vm, counter):
    # Shown straight from the host view of the buffer's pages: nothing
    # composed, nothing copied, each flip still pushed.
    compositions = vm.qom_get("x-head0-compositions")
    copied = vm.qom_get("x-bounce-bytes")
    delivered(vm, counter, "", "one full-screen plane")
    composed = vm.qom_get("x-head0-compositions") - compositions
    copied = vm.qom_get("x-bounce-bytes") - copied
    # The switch from the two-plane scene to the single plane may compose
    # one frame before the first flip.
    if composed > 1 or copied:
        raise AssertionError(f"single-plane flips took {composed} "
                             f"compositions and copied {copied} bytes: "
                             "not shown directly from the pages")


def moving_single_plane_picture(vm, counter):
    """A single-plane picture keeps changing for the listener: after the
    first frame, each flip to the other buffer arrives."""
    before = counter.frames()
    vm.check("pvdc-flipbench -k 1 -n 8", 120)
    got = counter.wait_frames(before + 8) - before
    if got < 8:
        raise AssertionError(f"{got} distinct pictures of 8 flips: frozen")


def run_cases(tap, tmp):
    names = ["D-Bus: a composed scene of two planes delivers >= 95 % of "
             "the frames latched",
             "D-Bus: single-plane flips, shown straight from the pages, "
             "deliver >= 95 % of the frames latched",
             "D-Bus: a moving single-plane picture is seen changing"]
    bus = ui_clients.DBusDisplay(tmp)
    counter = None
    done = 0
    try:
        address = bus.start_bus()
        xml_path = os.path.join(os.path.realpath(artefact("qemu")), "ui",
                                "dbus-display1.xml")
        with open(xml_path) as f:
            interface_xml = f.read()
        with GuestVM(devices=DEVICE, memory=f"{MEMORY}M",
                     extra_args=MEMFD_RAM,
                     display=["-display", f"dbus,addr={address}"]) as vm:
            bus.connect()
            bus.wait_for_qemu()
            consoles = [p for p, props in bus.consoles().items()
                        if props.get("Head") == 0 and
                        props.get("Type") == "Graphic"]
            if len(consoles) != 1:
                raise AssertionError(f"consoles of head 0: {consoles}")
            # A static console between the runs: no blinking cursor, whose
            # pictures would count as frames.
            vm.check("echo 0 > /sys/class/graphics/fbcon/cursor_blink")
            counter = FrameCounter(bus, consoles[0], interface_xml)
            tap.case(names[0], composed_scene, vm, counter)
            tap.case(names[1], single_plane_flips, vm, counter)
            tap.case(names[2], moving_single_plane_picture, vm, counter)
            done = 3
    except Exception as e:  # noqa: BLE001 - the rest cannot run
        for name in names[done:]:
            tap.fail(name, e)
    finally:
        if counter:
            counter.close()
        bus.stop()


if __name__ == "__main__":
    sys.exit(Tap().run("pvdc-push-", run_cases))
