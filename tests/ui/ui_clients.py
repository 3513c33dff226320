"""Clients of QEMU's display back ends, for the tests: each returns what a
user of that back end would see of pvdc's heads, as harness Pictures.

- VNC: a minimal RFB 3.8 client (no authentication, raw encoding).
- SPICE: spice-gtk's client library (SpiceClientGLib through python3-gi),
  one display channel per head.
- D-Bus: the org.qemu.Display1 interface on a private bus: the Console
  objects, and a Listener registered on each that receives its scanout.
- X11 (GTK, SDL): windows and pixels of an Xvfb screen.

Every wait is bounded; failures raise AssertionError with what was seen.
"""

import ctypes
import os
import re
import socket
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "scripts"))
from pvdc_paths import ROOT  # noqa: E402
sys.path.insert(0, os.path.join(ROOT, "tests", "guest"))
from pvdc_harness import GuestError, Picture, modeset_head  # noqa: E402

TIMEOUT = 60
# SPICE's SPICE_SURFACE_FMT_32_xRGB: B, G, R, X bytes in memory.
SPICE_SURFACE_FMT_32_XRGB = 32
# pixman's x8r8g8b8 and a8r8g8b8: B, G, R, X/A bytes in memory.
PIXMAN_XRGB = (0x20020888, 0x20028888)


# -- what a picture shows ------------------------------------------------------

def shows_head(head):
    """A settle test: the picture shows HEAD's colour bars (pvdc-modeset's,
    shifted by the head's number)."""
    def check(pic):
        try:
            return modeset_head(pic) == head
        except GuestError:
            return False
    return check


def shows_heads(pics):
    """A settle test: picture N shows head N's colour bars, for every N."""
    return all(shows_head(head)(pic) for head, pic in enumerate(pics))


def expect_head(pic, head, what):
    """WHAT's picture PIC shows HEAD's colour bars, or AssertionError."""
    try:
        shown = modeset_head(pic)
    except GuestError as e:
        raise AssertionError(f"{what}: {e}")
    if shown != head:
        raise AssertionError(f"{what} shows head {shown}, not {head}")


# -- VNC ----------------------------------------------------------------------

def _recv_exact(sock, n):
    data = bytearray()
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise AssertionError(f"VNC server closed the connection "
                                 f"({len(data)} of {n} bytes)")
        data += chunk
    return bytes(data)


def vnc_picture(address, timeout=TIMEOUT):
    """The whole framebuffer of the VNC server at ADDRESS, a (host, port)
    pair or a unix socket path."""
    if isinstance(address, str):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    else:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        sock.connect(address)
        version = _recv_exact(sock, 12)
        if not version.startswith(b"RFB 003."):
            raise AssertionError(f"not an RFB server: {version!r}")
        sock.sendall(b"RFB 003.008\n")
        count = _recv_exact(sock, 1)[0]
        types = _recv_exact(sock, count)
        if 1 not in types:
            raise AssertionError(f"VNC security types {list(types)}, no None")
        sock.sendall(b"\x01")
        if struct.unpack(">I", _recv_exact(sock, 4))[0] != 0:
            raise AssertionError("VNC security handshake failed")
        sock.sendall(b"\x01")  # shared
        width, height = struct.unpack(">HH", _recv_exact(sock, 4))
        _recv_exact(sock, 16)
        _recv_exact(sock, struct.unpack(">I", _recv_exact(sock, 4))[0])
        # 32-bit true colour, little endian, red at bit 16: B, G, R, X bytes.
        sock.sendall(struct.pack(">B3xBBBBHHHBBB3x", 0, 32, 24, 0, 1,
                                 255, 255, 255, 16, 8, 0))
        # Raw, and DesktopSize so that a mode change is followed.
        sock.sendall(struct.pack(">BxHii", 2, 2, 0, -223))
        fb = bytearray(width * height * 4)
        covered = 0
        sock.sendall(struct.pack(">BBHHHH", 3, 0, 0, 0, width, height))
        deadline = time.monotonic() + timeout
        while covered < width * height:
            if time.monotonic() > deadline:
                raise AssertionError("VNC: no full framebuffer update")
            kind = _recv_exact(sock, 1)[0]
            if kind == 2:       # Bell
                continue
            if kind == 3:       # ServerCutText
                _recv_exact(sock, 3)
                _recv_exact(sock, struct.unpack(">I",
                                                _recv_exact(sock, 4))[0])
                continue
            if kind != 0:
                raise AssertionError(f"VNC: unexpected message {kind}")
            _, rects = struct.unpack(">BH", _recv_exact(sock, 3))
            for _ in range(rects):
                x, y, w, h, enc = struct.unpack(">HHHHi",
                                                _recv_exact(sock, 12))
                if enc == -223:
                    width, height = w, h
                    fb = bytearray(width * height * 4)
                    covered = 0
                    sock.sendall(struct.pack(">BBHHHH", 3, 0, 0, 0,
                                             width, height))
                    continue
                if enc != 0:
                    raise AssertionError(f"VNC: encoding {enc} not asked for")
                data = _recv_exact(sock, w * h * 4)
                for row in range(h):
                    at = ((y + row) * width + x) * 4
                    fb[at:at + w * 4] = data[row * w * 4:(row + 1) * w * 4]
                covered += w * h
    finally:
        sock.close()
    return bgrx_picture(width, height, width * 4, fb)


def bgrx_picture(width, height, stride, data):
    """A Picture from 32-bit little-endian xRGB rows (pixman x8r8g8b8)."""
    rgb = bytearray(width * height * 3)
    for y in range(height):
        row = data[y * stride:y * stride + width * 4]
        out = rgb[y * width * 3:(y + 1) * width * 3]
        out[0::3] = row[2::4]
        out[1::3] = row[1::4]
        out[2::3] = row[0::4]
        rgb[y * width * 3:(y + 1) * width * 3] = out
    return Picture(width, height, bytes(rgb))


# -- SPICE --------------------------------------------------------------------

def spice_displays(host, port, count, timeout=TIMEOUT, settle=None):
    """The primary surface of SPICE display channels 0..COUNT-1.

    SETTLE, when given, is called with the pictures and returns True when
    they show what the caller waits for; until then (or the timeout) the
    channels keep receiving drawing commands.
    """
    import gi
    gi.require_version("SpiceClientGLib", "2.0")
    from gi.repository import GLib, GObject, SpiceClientGLib

    session = SpiceClientGLib.Session()
    session.set_property("host", host)
    session.set_property("port", str(port))
    # channel id -> (width, height, stride, address) of its primary surface,
    # from the primary-create signal (spice-gtk's DisplayPrimary struct does
    # not come through GObject introspection intact).
    primaries = {}
    channels = []

    def channel_new(sess, channel):
        if not isinstance(channel, SpiceClientGLib.DisplayChannel):
            return
        cid = channel.get_property("channel-id")

        def created(ch, fmt, width, height, stride, shmid, data):
            primaries[cid] = (fmt, width, height, stride, data)

        def destroyed(ch):
            primaries.pop(cid, None)

        GObject.Object.connect(channel, "display-primary-create", created)
        GObject.Object.connect(channel, "display-primary-destroy", destroyed)
        channels.append(channel)
        # SpiceChannel's connect(), not GObject's signal connect().
        SpiceClientGLib.Channel.connect(channel)

    GObject.Object.connect(session, "channel-new", channel_new)
    if not session.connect():
        raise AssertionError(f"SPICE: cannot connect to {host}:{port}")
    ctx = GLib.MainContext.default()
    deadline = time.monotonic() + timeout
    pictures = None
    try:
        while True:
            while ctx.pending():
                ctx.iteration(False)
            pictures = _spice_pictures(primaries, count)
            if pictures and (settle is None or settle(pictures)):
                return pictures
            if time.monotonic() > deadline:
                break
            time.sleep(0.05)
    finally:
        session.disconnect()
        while ctx.pending():
            ctx.iteration(False)
    raise AssertionError(f"SPICE: primary surfaces {primaries}, "
                         f"{'pictures did not settle' if pictures else 'not one on every channel'}"
                         f" within {timeout} s")


def _spice_pictures(primaries, count):
    pictures = []
    for i in range(count):
        if i not in primaries:
            return None
        fmt, width, height, stride, data = primaries[i]
        if fmt != SPICE_SURFACE_FMT_32_XRGB or stride < width * 4 or not data:
            raise AssertionError(f"SPICE display {i}: format {fmt}, "
                                 f"{width}x{height}, stride {stride}")
        pictures.append(bgrx_picture(width, height, stride,
                                     ctypes.string_at(data, stride * height)))
    return pictures


# -- D-Bus --------------------------------------------------------------------

class DBusDisplay:
    """QEMU's -display dbus on a bus of our own."""

    def __init__(self, tmp):
        self.tmp = tmp
        self.bus = None
        self.address = None
        self.conn = None

    def start_bus(self):
        """A private dbus-daemon; its address is for QEMU's addr=."""
        path = os.path.join(self.tmp, "bus")
        self.bus = subprocess.Popen(
            ["dbus-daemon", "--session", "--nofork", "--nopidfile",
             f"--address=unix:path={path}", "--print-address"],
            stdout=subprocess.PIPE, text=True, start_new_session=True,
            stderr=open(os.path.join(self.tmp, "dbus-daemon.log"), "w"))
        if not self.bus.stdout.readline().strip():
            raise AssertionError("dbus-daemon did not start")
        # The path alone: the printed address has a comma (guid=), which
        # QEMU's option syntax would split.
        self.address = f"unix:path={path}"
        return self.address

    def connect(self):
        from gi.repository import Gio
        flags = (Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT |
                 Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION)
        self.conn = Gio.DBusConnection.new_for_address_sync(
            self.address, flags, None, None)

    def wait_for_qemu(self, timeout=TIMEOUT):
        from gi.repository import GLib
        deadline = time.monotonic() + timeout
        while True:
            names = self.conn.call_sync(
                "org.freedesktop.DBus", "/org/freedesktop/DBus",
                "org.freedesktop.DBus", "ListNames", None,
                GLib.VariantType("(as)"), 0, 5000, None).unpack()[0]
            if "org.qemu" in names:
                return
            if time.monotonic() > deadline:
                raise AssertionError(f"org.qemu not on the bus: {names}")
            time.sleep(0.1)

    def consoles(self):
        """{object path: properties} of every org.qemu.Display1.Console."""
        from gi.repository import Gio, GLib
        xml = self.conn.call_sync(
            "org.qemu", "/org/qemu/Display1",
            "org.freedesktop.DBus.Introspectable", "Introspect", None,
            GLib.VariantType("(s)"), 0, 5000, None).unpack()[0]
        nodes = Gio.DBusNodeInfo.new_for_xml(xml).nodes
        out = {}
        for node in nodes:
            if not node.path.startswith("Console_"):
                continue
            path = f"/org/qemu/Display1/{node.path}"
            props = self.conn.call_sync(
                "org.qemu", path, "org.freedesktop.DBus.Properties", "GetAll",
                GLib.Variant("(s)", ("org.qemu.Display1.Console",)),
                GLib.VariantType("(a{sv})"), 0, 5000, None).unpack()[0]
            out[path] = props
        return out

    def scanout(self, console_path, interface_xml, settle=None,
                timeout=TIMEOUT):
        """Register a Listener on the console and return the picture its
        Scanout (and following Updates) delivered, once SETTLE accepts it
        (or at the first Scanout without SETTLE)."""
        from gi.repository import Gio, GLib
        info = Gio.DBusNodeInfo.new_for_xml(interface_xml)
        listener = info.lookup_interface("org.qemu.Display1.Listener")
        if listener is None:
            raise AssertionError("no org.qemu.Display1.Listener interface")
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        state = {"picture": None, "fb": None, "calls": []}

        def method_call(conn, sender, path, iface, method, params, inv):
            state["calls"].append(method)
            args = params.unpack()
            if method in ("Scanout", "Update") and \
                    args[-2] not in PIXMAN_XRGB:
                state["calls"].append(f"{method} in format {args[-2]:#x}")
            elif method == "Scanout":
                width, height, stride, fmt, data = args
                state["fb"] = [width, height, stride, bytearray(data)]
            elif method == "Update" and state["fb"]:
                x, y, w, h, stride, fmt, data = args
                width, height, fb_stride, fb = state["fb"]
                for row in range(h):
                    at = (y + row) * fb_stride + x * 4
                    fb[at:at + w * 4] = data[row * stride:row * stride + w * 4]
            if state["fb"]:
                width, height, stride, fb = state["fb"]
                state["picture"] = bgrx_picture(width, height, stride, fb)
            inv.return_value(None)

        def get_property(conn, sender, path, iface, name):
            if name == "Interfaces":
                # No optional interfaces (shared-memory scanout and the
                # like): everything comes in Scanout and Update calls.
                return GLib.Variant("as", [])
            return None

        fd_list = Gio.UnixFDList.new()
        fd_list.append(theirs.fileno())
        theirs_index = 0
        self.conn.call_with_unix_fd_list_sync(
            "org.qemu", console_path, "org.qemu.Display1.Console",
            "RegisterListener", GLib.Variant("(h)", (theirs_index,)),
            None, 0, 5000, fd_list, None)
        theirs.close()
        stream = Gio.Socket.new_from_fd(
            ours.detach()).connection_factory_create_connection()
        conn = Gio.DBusConnection.new_sync(
            stream, None, Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT,
            None, None)
        conn.register_object("/org/qemu/Display1/Listener", listener,
                             method_call, get_property, None)
        ctx = GLib.MainContext.default()
        deadline = time.monotonic() + timeout
        try:
            while time.monotonic() < deadline:
                while ctx.pending():
                    ctx.iteration(False)
                pic = state["picture"]
                if pic and (settle is None or settle(pic)):
                    return pic
                time.sleep(0.02)
        finally:
            conn.close_sync(None)
        raise AssertionError(f"{console_path}: listener calls "
                             f"{sorted(set(state['calls']))}, "
                             f"{'picture did not settle' if state['picture'] else 'no scanout'}"
                             f" within {timeout} s")

    def stop(self):
        if self.conn:
            self.conn.close_sync(None)
            self.conn = None
        if self.bus and self.bus.poll() is None:
            self.bus.terminate()
            self.bus.wait(timeout=10)


# -- X11 ----------------------------------------------------------------------

class Xvfb:
    """A virtual X server whose screen is readable as a file (-fbdir)."""

    def __init__(self, tmp, width=2400, height=1000):
        self.tmp = tmp
        self.size = (width, height)
        self.proc = None
        self.display = None

    def start(self, timeout=30):
        # -displayfd: the server picks a free display number and says it.
        r, w = os.pipe()
        self.proc = subprocess.Popen(
            ["Xvfb", "-displayfd", str(w), "-screen", "0",
             f"{self.size[0]}x{self.size[1]}x24", "-fbdir", self.tmp,
             "-nolisten", "tcp", "+extension", "GLX"],
            pass_fds=[w], stdout=subprocess.DEVNULL,
            stderr=open(os.path.join(self.tmp, "xvfb.log"), "w"),
            start_new_session=True)
        os.close(w)
        deadline = time.monotonic() + timeout
        buf = b""
        while not buf.endswith(b"\n"):
            if time.monotonic() > deadline or self.proc.poll() is not None:
                raise AssertionError("Xvfb did not start")
            chunk = os.read(r, 16)
            if not chunk:
                break
            buf += chunk
        os.close(r)
        self.display = ":" + buf.decode().strip()
        return self.display

    def env(self):
        return dict(os.environ, DISPLAY=self.display,
                    # Software OpenGL (Mesa's llvmpipe); no GPU here.
                    LIBGL_ALWAYS_SOFTWARE="1")

    def windows(self):
        """[(name, x, y, width, height)] of the mapped top-level windows."""
        out = subprocess.run(["xwininfo", "-root", "-tree"],
                             capture_output=True, text=True, env=self.env(),
                             timeout=30).stdout
        wins = []
        for line in out.splitlines():
            m = re.match(r'\s+0x[0-9a-f]+ "(.*)": .* (\d+)x(\d+)\+-?\d+\+-?\d+'
                         r'\s+\+(-?\d+)\+(-?\d+)\s*$', line)
            if m:
                name, w, h, x, y = m.group(1), *map(int, m.group(2, 3, 4, 5))
                wins.append((name, x, y, w, h))
        return wins

    def screen(self):
        """The whole screen as a Picture (Xvfb's XWD screen file)."""
        with open(os.path.join(self.tmp, "Xvfb_screen0"), "rb") as f:
            data = f.read()
        fields = struct.unpack(">25I", data[:100])
        header_size, width, height = fields[0], fields[4], fields[5]
        bpp, stride, ncolors = fields[11], fields[12], fields[19]
        if bpp != 32:
            raise AssertionError(f"Xvfb screen has {bpp} bits per pixel")
        start = header_size + ncolors * 12
        return bgrx_picture(width, height, stride,
                            data[start:start + stride * height])

    def spread_windows(self, window="QEMU", gap=16):
        """Place the windows named WINDOW side by side (they open on top of
        each other, and there is no window manager)."""
        ids = subprocess.run(["xdotool", "search", "--onlyvisible", "--name",
                              window], capture_output=True, text=True,
                             env=self.env(), timeout=30).stdout.split()
        x = 0
        for wid in ids:
            subprocess.run(["xdotool", "windowmove", "--sync", wid, str(x),
                            "0"], env=self.env(), timeout=30, check=True)
            x += int(re.search(r"Width: (\d+)", subprocess.run(
                ["xwininfo", "-id", wid], capture_output=True, text=True,
                env=self.env(), timeout=30).stdout).group(1)) + gap
        return len(ids)

    def key(self, keys, window="QEMU"):
        """Type KEYS (xdotool's syntax) into the window named WINDOW: it
        gets the input focus first (there is no window manager)."""
        subprocess.run(["xdotool", "search", "--onlyvisible", "--name",
                        window, "windowfocus", "--sync", "key", keys],
                       env=self.env(), timeout=30, check=True)

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def crop(pic, x, y, w, h):
    """The part of PIC at x, y of size w x h (clipped to PIC)."""
    x0, y0 = max(x, 0), max(y, 0)
    x1, y1 = min(x + w, pic.width), min(y + h, pic.height)
    rows = [pic.data[(yy * pic.width + x0) * 3:(yy * pic.width + x1) * 3]
            for yy in range(y0, y1)]
    return Picture(x1 - x0, y1 - y0, b"".join(rows))
