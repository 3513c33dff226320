#!/usr/bin/python3
"""Every head of pvdc shows on every user interface QEMU offers (TAP).

The test guest lights both heads of a two-head pvdc with pvdc-modeset's
colour bars, shifted by the head's number, so that a picture tells which
head it shows.  Then, each through its own client:

- VNC: one server per head (display=pvdc0,head=N), read by an RFB client;
- SPICE: one display channel per head, read by spice-gtk's client library;
- D-Bus (-display dbus on a private bus): one Console object per head,
  with its head number and size, and a Listener registered on each
  receives that head's scanout;
- GTK and SDL, with and without OpenGL, in a virtual X server (Xvfb):
  the windows open and show the heads (GTK: one at a time, switched with
  its Ctrl+Alt+N shortcut; SDL: a window per head).

VNC, SPICE and D-Bus share one boot; each X11 front end has its own.
"""

import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "scripts"))
from pvdc_paths import ROOT  # noqa: E402
sys.path.insert(0, os.path.join(ROOT, "tests", "guest"))
sys.path.insert(0, os.path.join(ROOT, "tests", "ui"))
from pvdc_harness import (GuestError, GuestVM, MODESET_BARS, Tap,  # noqa: E402
                          artefact)
import ui_clients  # noqa: E402
from ui_clients import crop, expect_head, shows_head  # noqa: E402

HEADS = 2
DEVICE = ["-device", "pvdc,id=pvdc0,heads=2"]
SETTLE_TIMEOUT = 60


def light_heads(vm):
    """pvdc-modeset's colour bars on every head, held until the VM stops."""
    vm.start_background("pvdc-modeset 0", r"^# holding")


# -- VNC, SPICE, D-Bus -----------------------------------------------------------

def vnc_shows_each_head(vm, tmp):
    for head in range(HEADS):
        deadline = time.monotonic() + SETTLE_TIMEOUT
        while True:
            pic = ui_clients.vnc_picture(os.path.join(tmp, f"vnc{head}"))
            if shows_head(head)(pic) or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        expect_head(pic, head, f"VNC server of head {head}")


def spice_shows_each_head(vm, port):
    pictures = ui_clients.spice_displays("127.0.0.1", port, HEADS,
                                         settle=ui_clients.shows_heads)
    for head, pic in enumerate(pictures):
        expect_head(pic, head, f"SPICE display channel {head}")


def dbus_lists_a_console_per_head(bus):
    consoles = bus.consoles()
    heads = sorted((p.get("Head"), p.get("Type"), p.get("Width"),
                    p.get("Height")) for p in consoles.values()
                   if "pvdc" in str(p.get("Label", "")) or
                   p.get("Type") == "Graphic")
    want = [(h, "Graphic", 1024, 768) for h in range(HEADS)]
    if heads != want:
        raise AssertionError(f"Console objects: {consoles}")


def dbus_listener_receives_each_head(bus, qemu_build):
    xml_path = os.path.join(qemu_build, "ui", "dbus-display1.xml")
    with open(xml_path) as f:
        interface_xml = f.read()
    consoles = bus.consoles()
    for path, props in sorted(consoles.items()):
        if props.get("Type") != "Graphic":
            continue
        head = props["Head"]
        pic = bus.scanout(path, interface_xml, settle=shows_head(head))
        expect_head(pic, head, f"D-Bus listener of {path}")


def remote_back_ends(tap, tmp):
    bus = ui_clients.DBusDisplay(tmp)
    names = ["VNC: each head on its own server",
             "SPICE: each head on its own display channel",
             "D-Bus: a Console object per head, with its head and size",
             "D-Bus: a listener receives each head's scanout"]
    try:
        address = bus.start_bus()
    except (OSError, AssertionError) as e:
        for name in names:
            tap.fail(name, AssertionError(f"private dbus-daemon: {e}"))
        return
    port = free_port()
    display = ["-display", f"dbus,addr={address}",
               "-spice", f"port={port},addr=127.0.0.1,disable-ticketing=on,"
                         "image-compression=off"]
    for head in range(HEADS):
        display += ["-vnc", f"unix:{tmp}/vnc{head},id=vnc{head},"
                            f"display=pvdc0,head={head}"]
    done = 0
    try:
        with GuestVM(devices=DEVICE, display=display) as vm:
            light_heads(vm)
            tap.case(names[0], vnc_shows_each_head, vm, tmp)
            tap.case(names[1], spice_shows_each_head, vm, port)
            done = 2
            bus.connect()
            bus.wait_for_qemu()
            tap.case(names[2], dbus_lists_a_console_per_head, bus)
            tap.case(names[3], dbus_listener_receives_each_head, bus,
                     os.path.realpath(artefact("qemu")))
            done = 4
    except Exception as e:  # noqa: BLE001 - the rest cannot run
        for name in names[done:]:
            tap.fail(name, e)
    finally:
        bus.stop()


def free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# -- GTK and SDL under Xvfb --------------------------------------------------------

def bars_heads(pic):
    """The heads whose colour bars some row of PIC shows, found anywhere
    in the row (a window shows the head at some offset, maybe scaled)."""
    found = set()
    bars = MODESET_BARS
    for y in range(0, pic.height, 5):
        runs = []
        row = pic.data[y * pic.width * 3:(y + 1) * pic.width * 3]
        x = 0
        while x < pic.width:
            colour = row[x * 3:x * 3 + 3]
            start = x
            while x < pic.width and row[x * 3:x * 3 + 3] == colour:
                x += 1
            if x - start >= 24:
                runs.append((colour[0] << 16) | (colour[1] << 8) | colour[2])
        for i in range(len(runs) - 7):
            seq = runs[i:i + 8]
            if seq[0] in bars:
                phase = bars.index(seq[0])
                if seq == [bars[(phase + k) % 8] for k in range(8)]:
                    found.add(phase % 4)
    return found


def qemu_windows(x):
    return [w for w in x.windows() if "QEMU" in w[0]]


def wait_windows(x, vm, count, heads_wanted, timeout=SETTLE_TIMEOUT):
    """Wait until COUNT QEMU windows are mapped and, together, show the
    colour bars of exactly the heads HEADS_WANTED; return the windows."""
    deadline = time.monotonic() + timeout
    while True:
        if not vm.is_running():
            raise AssertionError(f"QEMU exited {vm.exitcode()}:\n"
                                 f"{vm.tail()}")
        wins = qemu_windows(x)
        shown = set()
        if len(wins) >= count:
            screen = x.screen()
            for name, wx, wy, ww, wh in wins:
                shown |= bars_heads(crop(screen, wx, wy, ww, wh))
        if len(wins) >= count and shown == set(heads_wanted):
            return wins
        if time.monotonic() > deadline:
            raise AssertionError(f"QEMU windows {wins} show the bars of "
                                 f"heads {sorted(shown)}, want "
                                 f"{sorted(heads_wanted)}")
        time.sleep(0.5)


def gtk_shows_both_heads(x, vm):
    wait_windows(x, vm, 1, {0})
    # GTK's shortcut for the second console: Ctrl+Alt+2.
    x.key("ctrl+alt+2")
    wait_windows(x, vm, 1, {1})
    x.key("ctrl+alt+1")
    wait_windows(x, vm, 1, {0})


def sdl_shows_both_heads(x, vm):
    deadline = time.monotonic() + SETTLE_TIMEOUT
    while len(qemu_windows(x)) < HEADS and time.monotonic() < deadline:
        time.sleep(0.5)
    x.spread_windows()
    wins = wait_windows(x, vm, HEADS, set(range(HEADS)))
    if len(wins) != HEADS:
        raise AssertionError(f"SDL windows: {wins}")


def x11_back_end(tap, tmp, name, display, check):
    xdir = tempfile.mkdtemp(prefix="x-", dir=tmp)
    x = ui_clients.Xvfb(xdir)
    try:
        x.start()
    except (OSError, AssertionError) as e:
        tap.fail(name, e)
        return
    env = os.environ.copy()
    os.environ.update(x.env())
    try:
        with GuestVM(devices=DEVICE, display=display) as vm:
            light_heads(vm)
            tap.case(name, check, x, vm)
    except GuestError as e:
        tap.fail(name, e)
    finally:
        os.environ.clear()
        os.environ.update(env)
        x.stop()


def run_cases(tap, tmp):
    remote_back_ends(tap, tmp)
    for name, display, check in [
            ("GTK: the window shows head 0, Ctrl+Alt+2 head 1",
             ["-display", "gtk,gl=off"], gtk_shows_both_heads),
            ("GTK with OpenGL: the window shows head 0, Ctrl+Alt+2 head 1",
             ["-display", "gtk,gl=on"], gtk_shows_both_heads),
            ("SDL: a window per head", ["-display", "sdl,gl=off"],
             sdl_shows_both_heads),
            ("SDL with OpenGL: a window per head",
             ["-display", "sdl,gl=on"], sdl_shows_both_heads)]:
        x11_back_end(tap, tmp, name, display, check)


if __name__ == "__main__":
    sys.exit(Tap().run("pvdc-ui-", run_cases))
