#!/usr/bin/python3
"""A stock Debian 12 guest on pvdc, as a user runs it.

The guest (scripts/build-rootfs.sh: debootstrap, Debian's 6.12 kernel,
DKMS, Weston and the project's pvdc-dkms package installed with apt) boots
from an AHCI disk with pvdc as its only display device.  From the host:

- pvdc.ko was built by DKMS for the running kernel, and udev bound it to
  the device from its PCI modalias: nothing loads it by name;
- the boot console is on head 0 through fbdev emulation: every character
  cell of the foreground virtual console (read from /dev/vcsa) is inked or
  blank on the screendump exactly as the text says;
- Weston's DRM backend runs on pvdc with atomic modesetting, lists pvdc's
  planes, lights both heads with the desktop (its background and panel
  colours on each), and a Wayland client's frame (weston-image showing a
  picture in four colours made here) appears on the screen;
- with its GL renderer, Weston puts a client's linux-dmabuf buffer on one
  of pvdc's overlay planes, scaled: weston-simple-dmabuf-v4l shows the
  vivid camera's YUYV capture buffers, exported as dma-bufs, fullscreen
  (wp_viewporter scales them up to the output); Weston's own drm-backend
  log assigns the client's view to an overlay plane while its renderer
  keeps the primary, and the host's screendump shows the camera's colour
  bars at the scaled width;
- `apt install ./pvdc-dkms_*.deb` in the running guest builds and installs
  the module for the running kernel.

The desktop is Weston 14 and Mesa 25 from bookworm-backports: Debian 12's
own Weston 10 and Mesa 22.3 never put a client's buffer on a plane (see
scripts/build-rootfs.sh).

Every wait is on real state: the harness's ready marker after systemd has
finished booting, in-guest polls of logs and files, screendumps polled
until they show the expected content, each with a bound.
"""

import base64
import os
import re
import struct
import sys
import time
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pvdc_harness import (GuestError, Tap,  # noqa: E402
                          register_arrays, register_constants)
from stock_guest import (DESKTOP_LOG, DESKTOP_UNIT, WAYLAND_ENV,  # noqa: E402
                         StockGuest)

HEADS = 2
# DKMS under TCG inside the guest: depmod over the whole kernel's modules
# (on removal and on installation) and the build itself.
DKMS_TIMEOUT = 1500

# tests/guest/stock/rootfs/etc/xdg/weston/weston.ini
BACKGROUND = 0x1d4e89
PANEL = 0x202020
# The client's picture: four quadrants in colours Weston's desktop does not
# use, so finding them on a head means the client's frame is there.
QUADRANTS = [0xff0080, 0x00ff80, 0xffd000, 0x8000ff]
PICTURE_SIZE = (240, 160)

# Glyphs of the console font that have no ink.
BLANK_GLYPHS = {0, 32, 255}
# The full block has no background: either verdict is right.
FULL_BLOCK = 219


def poll_host(what, fn, timeout):
    """Call FN until it returns something true (its verdict) or TIMEOUT
    seconds pass; then raise with FN's last explanation."""
    deadline = time.monotonic() + timeout
    while True:
        ok, why = fn()
        if ok:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} not seen within {timeout:.0f} s: "
                                 f"{why}")
        time.sleep(0.5)


# -- DKMS and modalias --------------------------------------------------------

def built_by_dkms(vm):
    kver = vm.kernel_version
    status = vm.check("dkms status pvdc")
    if not re.search(rf"^pvdc/\S+, {re.escape(kver)}, x86_64: installed",
                     status, re.M):
        raise AssertionError(f"dkms status has no installed pvdc for "
                             f"{kver}:\n{status}")
    path = vm.check("modinfo -n pvdc").strip()
    if not path.startswith(f"/lib/modules/{kver}/updates/dkms/pvdc.ko"):
        raise AssertionError(f"modprobe finds pvdc at {path}, not in DKMS's "
                             "tree")
    # The module in the kernel is that file, not one loaded from elsewhere:
    # the same GNU build ID.
    loaded = vm.check("od -An -tx1 -v /sys/module/pvdc/notes/"
                      ".note.gnu.build-id | tr -d ' \\n'").strip()
    built = vm.check(f"xz -dcf {path} >/tmp/pvdc.ko && readelf -n "
                     f"/tmp/pvdc.ko | sed -n 's/.*Build ID: //p'").strip()
    if not built or not loaded.endswith(built):
        raise AssertionError(f"loaded pvdc's build ID note {loaded} does "
                             f"not end in the DKMS build's ID {built!r}")


def pvdc_sysfs(vm):
    vendor, device = (register_constants()[f"PVDC_PCI_{what}_ID"]
                      for what in ("VENDOR", "DEVICE"))
    out = vm.check(f"grep -l {device:#06x} /sys/bus/pci/devices/*/device")
    devs = [os.path.dirname(p) for p in out.split() if p.startswith("/sys")]
    devs = [d for d in devs
            if vm.check(f"cat {d}/vendor").strip() == f"{vendor:#06x}"]
    if len(devs) != 1:
        raise AssertionError(f"expected one pvdc PCI function, found {devs}")
    return devs[0]


def bound_by_modalias(vm):
    dev = pvdc_sysfs(vm)
    driver = vm.check(f"basename $(readlink {dev}/driver)").strip()
    if driver != "pvdc":
        raise AssertionError(f"{dev} is bound to {driver!r}")
    modalias = vm.check(f"cat {dev}/modalias").strip()
    resolved = vm.check(f"modprobe --resolve-alias '{modalias}'").split()
    if resolved != ["pvdc"]:
        raise AssertionError(f"modalias {modalias} resolves to {resolved}")
    # Nothing names the module: not the kernel command line, not a
    # modules-load.d file, not /etc/modules.
    rc, out = vm.run("grep -rlw pvdc /proc/cmdline /etc/modules "
                     "/etc/modules-load.d /usr/lib/modules-load.d "
                     "/run/modules-load.d /etc/modprobe.d 2>/dev/null")
    if rc == 0:
        raise AssertionError(f"pvdc is named in {out.split()}")


# -- console ------------------------------------------------------------------

def console_cells(vm):
    """The foreground console's text: (rows, cols, cursor, [(glyph, attr)])."""
    vt = vm.check("cat /sys/class/tty/tty0/active").strip()
    raw = base64.b64decode(vm.check(f"base64 -w0 /dev/vcsa{vt[3:]}").strip())
    rows, cols, x, y = raw[0], raw[1], raw[2], raw[3]
    cells = [(raw[4 + 2 * i], raw[5 + 2 * i]) for i in range(rows * cols)]
    return rows, cols, (x, y), cells


def console_mismatches(pic, rows, cols, cursor, cells):
    """Cells whose ink on the picture disagrees with the text."""
    fw, fh = pic.width // cols, pic.height // rows
    if not (6 <= fw <= 32 and 8 <= fh <= 64):
        return [f"implausible {fw}x{fh} cells for a {pic.width}x"
                f"{pic.height} screen of {cols}x{rows} characters"]
    bad = []
    for r in range(rows):
        for c in range(cols):
            glyph = cells[r * cols + c][0]
            if (c, r) == cursor or glyph == FULL_BLOCK:
                continue
            colours = {pic.xrgb(c * fw + i, r * fh + j)
                       for j in range(fh) for i in range(fw)}
            inked = len(colours) > 1
            if inked != (glyph not in BLANK_GLYPHS):
                bad.append(f"({c},{r}) glyph {glyph} "
                           f"{'inked' if inked else 'blank'}")
    return bad


def console_on_head0(vm):
    fb = vm.check("cat /sys/class/graphics/fb0/name").strip()
    if not fb.startswith("pvdc"):
        raise AssertionError(f"fb0 is {fb!r}, not pvdc's fbdev emulation")

    def compare():
        # The text is read on both sides of the screendump; a console that
        # changed meanwhile is simply read again.
        before = console_cells(vm)
        pic = vm.screen(0)
        if console_cells(vm) != before:
            return False, "console text changing"
        rows, cols, cursor, cells = before
        text = sum(g not in BLANK_GLYPHS for g, _ in cells)
        if text < 20:
            return False, f"only {text} characters on the console"
        bad = console_mismatches(pic, rows, cols, cursor, cells)
        return not bad, f"{len(bad)} of {rows * cols} cells differ: {bad[:8]}"
    poll_host("the console text on head 0", compare, 60)


# -- Weston -----------------------------------------------------------------

def start_desktop(vm):
    # Weston's drm-backend debug scope logs every KMS object and property
    # its atomic commits program.
    vm.check("echo WESTON_ARGS=--logger-scopes=log,drm-backend "
             ">/run/pvdc-desktop.env")
    vm.check(f"systemctl start {DESKTOP_UNIT}")
    vm.wait_for_desktop()


def weston_atomic_on_pvdc(vm):
    log = vm.check(f"cat {DESKTOP_LOG}")
    for want in ("DRM: supports atomic modesetting",
                 "using /dev/dri/card0"):
        if want not in log:
            raise AssertionError(f"Weston's log lacks {want!r}:\n{log[-3000:]}")
    name = vm.check("cat /sys/kernel/debug/dri/0/name")
    if not name.startswith("pvdc "):
        raise AssertionError(f"/dev/dri/card0 is {name!r}")
    # debugfs, not a DRM client of our own: Weston holds DRM master.
    clients = vm.check("cat /sys/kernel/debug/dri/0/clients")
    if not re.search(r"^\s*weston\s+\d+\s+\d+\s+y\s+y", clients, re.M):
        raise AssertionError(f"Weston is not pvdc's DRM master:\n{clients}")


def kernel_planes(vm):
    """pvdc's planes as the kernel lists them: {id: type name}."""
    state = vm.check("cat /sys/kernel/debug/dri/0/state")
    return dict(re.findall(r"^plane\[(\d+)\]: (\S+)", state, re.M))


def plane_types(vm, planes):
    """{plane id: PVDC_PLANE_TYPE_*} read from the device's PLANE_CAPS
    registers through the monitor (the host never opens the DRM device)."""
    consts = register_constants()
    caps_base, caps_stride = \
        register_arrays()["PVDC_REG_PLANE_CAPS"]
    bar0 = int(vm.check(f"head -n1 {pvdc_sysfs(vm)}/resource").split()[0],
               16)
    types = {}
    for plane_id, name in planes.items():
        index = int(name.rsplit("-", 1)[1])
        addr = bar0 + caps_base + caps_stride * index
        out = vm.cmd("human-monitor-command",
                             **{"command-line": f"xp /1wx {addr:#x}"})
        caps = int(out.split()[-1], 16)
        types[plane_id] = (caps >> consts["PVDC_PLANE_CAPS_TYPE_SHIFT"]) & \
            ((1 << consts["PVDC_PLANE_CAPS_TYPE_LENGTH"]) - 1)
    return types, consts


def weston_lists_planes(vm):
    planes = kernel_planes(vm)
    types, consts = plane_types(vm, planes)
    cursors = {p for p, t in types.items()
               if t == consts["PVDC_PLANE_TYPE_CURSOR"]}
    if len(cursors) != HEADS or len(planes) < 3 * HEADS:
        raise AssertionError(f"pvdc's planes {planes} of types {types}")
    # Weston's first commit takes over every primary and overlay plane; its
    # pixman renderer has no buffer for a hardware cursor, so it leaves the
    # cursor planes alone.
    log = vm.check(f"cat {DESKTOP_LOG}")
    seen = set(re.findall(r"\[PLANE:(\d+)\]", log))
    unknown = seen - set(planes)
    if unknown:
        raise AssertionError(f"Weston lists planes {sorted(unknown)} that "
                             f"pvdc does not have")
    missing = set(planes) - cursors - seen
    if missing:
        raise AssertionError(f"Weston's log does not list planes "
                             f"{sorted(missing)} of {sorted(planes)}")


def colour_share(pic, colour, rows=None):
    """Fraction of the pixels of PIC (or of its rows ROWS) of COLOUR."""
    rows = rows or range(pic.height)
    hits = total = 0
    for y in rows:
        for x in range(0, pic.width, 2):
            total += 1
            hits += pic.xrgb(x, y) == colour
    return hits / total


def desktop_on_every_head(vm):
    state = vm.check("cat /sys/kernel/debug/dri/0/state")
    active = re.findall(r"^crtc\[\d+\]: \S+\n\tenable=1\n\tactive=1", state,
                        re.M)
    if len(active) != HEADS:
        raise AssertionError(f"{len(active)} of {HEADS} CRTCs active:\n"
                             f"{state[:3000]}")

    def shows_desktop(head):
        def check():
            pic = vm.screen(head)
            bg = colour_share(pic, BACKGROUND)
            panel = colour_share(pic, PANEL, range(0, 16))
            return (bg > 0.5 and panel > 0.5,
                    f"head {head}: background {bg:.0%}, panel {panel:.0%}")
        return check
    for head in range(HEADS):
        poll_host(f"the desktop on head {head}", shows_desktop(head), 60)


def png(width, height, colour_at):
    """A truecolour PNG, made here so the client shows colours we chose."""
    raw = b"".join(
        b"\0" + b"".join(colour_at(x, y).to_bytes(3, "big")
                         for x in range(width))
        for y in range(height))

    def chunk(kind, data):
        return (struct.pack(">I", len(data)) + kind + data +
                struct.pack(">I", zlib.crc32(kind + data)))
    return (b"\x89PNG\r\n\x1a\n" +
            chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0,
                                       0, 0)) +
            chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


def client_frame_visible(vm):
    w, h = PICTURE_SIZE
    data = png(w, h, lambda x, y:
               QUADRANTS[(2 if y >= h // 2 else 0) + (x >= w // 2)])
    vm.check(f"echo {base64.b64encode(data).decode()} | base64 -d "
             f">/tmp/quadrants.png")
    vm.start_background(f"{WAYLAND_ENV} weston-image /tmp/quadrants.png",
                        "", 30)

    def visible():
        seen = []
        for head in range(HEADS):
            pic = vm.screen(head)
            shares = [colour_share(pic, c) for c in QUADRANTS]
            # Each quadrant is 120x80 pixels: at least half of it shown.
            need = (w // 2) * (h // 2) / 2 / (pic.width * pic.height)
            if all(s >= need for s in shares):
                return True, ""
            seen.append(f"head {head}: " + ", ".join(
                f"{c:06x} {s:.2%}" for c, s in zip(QUADRANTS, shares)))
        return False, "; ".join(seen)
    poll_host("weston-image's picture", visible, 90)


# -- a client's dma-buf on an overlay ----------------------------------------

# vivid's default test pattern, 75 % colour bars, left to right.  The
# eighth bar, black, is left out: it cannot be told from what surrounds it.
VIVID_BARS = [0xbfbfbf, 0xbfbf00, 0x00bfbf, 0x00bf00, 0xbf00bf, 0xbf0000,
              0x0000bf]
# The camera's pixels reach the screen through YCbCr (BT.601, limited
# range) and a bilinear scaler.
BAR_TOLERANCE = 24


def bar_at(xrgb):
    """The index of the colour bar XRGB is, or None."""
    for i, bar in enumerate(VIVID_BARS):
        if all(abs(((xrgb >> s) & 0xff) - ((bar >> s) & 0xff)) <=
               BAR_TOLERANCE for s in (0, 8, 16)):
            return i
    return None


def bar_runs(pic, y):
    """[(bar, first x, length)] of the colour bars along row Y of PIC."""
    runs = []
    for x in range(pic.width):
        bar = bar_at(pic.xrgb(x, y))
        if bar is None:
            continue
        if runs and runs[-1][0] == bar and runs[-1][1] + runs[-1][2] == x:
            runs[-1][2] += 1
        else:
            runs.append([bar, x, 1])
    return [tuple(r) for r in runs]


def restart_desktop_with_gl(vm):
    vm.check(f"systemctl stop {DESKTOP_UNIT}")
    # wait_for_desktop() reads the log afresh.
    vm.check(f": >{DESKTOP_LOG}")
    vm.check("echo WESTON_RENDERER=gl >/run/pvdc-desktop.env")
    vm.check("echo WESTON_ARGS=--logger-scopes=log,drm-backend "
             ">>/run/pvdc-desktop.env")
    vm.check(f"systemctl start {DESKTOP_UNIT}")
    log = vm.wait_for_desktop()
    if "GL renderer:" not in log:
        raise AssertionError(f"Weston did not start its GL renderer:\n"
                             f"{log[-3000:]}")


def plane_rects(vm, plane_id):
    """The head, framebuffer size and the src and crtc rectangles of plane
    PLANE_ID in the kernel's atomic state: (head, (fb w, fb h), (src w,
    src h), (crtc w, crtc h, crtc x, crtc y)), or None while it shows
    nothing."""
    state = vm.check("cat /sys/kernel/debug/dri/0/state")
    m = re.search(rf"^plane\[{plane_id}\]: .*?\n(?=\S)", state + "\nx",
                  re.M | re.S)
    block = m.group(0) if m else ""
    head = re.search(r"^\tcrtc=head-(\d+)$", block, re.M)
    fb = re.search(r"^\t\tsize=(\d+)x(\d+)", block, re.M)
    crtc = re.search(r"crtc-pos=(\d+)x(\d+)([+-]\d+)([+-]\d+)", block)
    src = re.search(r"src-pos=([\d.]+)x([\d.]+)", block)
    if not (head and fb and crtc and src):
        return None
    return (int(head[1]), (int(fb[1]), int(fb[2])),
            (float(src[1]), float(src[2])),
            tuple(int(v) for v in crtc.groups()))


def client_dmabuf_on_overlay(vm):
    """weston-simple-dmabuf-v4l captures from vivid with V4L2 dma-buf i/o
    (VIDIOC_EXPBUF) and hands the buffers to Weston through linux-dmabuf,
    as YUYV with the LINEAR modifier; fullscreen, it scales them up to the
    output with wp_viewporter.  Weston's DRM backend imports them into
    pvdc (PRIME) and, since pvdc's primary planes take no YUYV, can show
    the view without composing it only on an overlay plane, scaled by the
    device."""
    planes = kernel_planes(vm)
    types, consts = plane_types(vm, planes)
    overlays = {p for p, t in types.items()
                if t == consts["PVDC_PLANE_TYPE_OVERLAY"]}
    restart_desktop_with_gl(vm)
    # One webcam input, as the client's own usage text suggests.
    vm.check("modprobe vivid n_devs=1 node_types=0x1 num_inputs=1 "
             "input_types=0x00")
    if not vm.poll("[ -c /dev/video0 ]"):
        raise AssertionError("vivid made no /dev/video0")
    log = vm.start_background(
        f"{WAYLAND_ENV} weston-simple-dmabuf-v4l -v /dev/video0 -f YUYV "
        f"-d YUYV --fullscreen", "creating buffer of size", 120)
    w, h = (int(v) for v in re.search(
        r"creating buffer of size (\d+)x(\d+)", vm.check(f"cat {log}"))
        .groups())
    pid = vm.check(f"cat {log}.pid").strip()

    on_overlay = set()

    def assigned():
        # Weston's debug log grows by a scene graph per frame: search it in
        # the guest, bring back only what matched.
        mine = set(vm.check(
            f"grep -o -E 'PID {pid}, surface ID [0-9]+, [^)]*, "
            f"0x[0-9a-f]+\\)' {DESKTOP_LOG} | grep -o -E '0x[0-9a-f]+\\)' "
            f"| tr -d ')' | sort -u").split())
        for view in mine:
            on_overlay.update(re.findall(r"plane (\d+)", vm.check(
                f"grep -E '\\[repaint\\] view {view} on overlay plane' "
                f"{DESKTOP_LOG} | sort -u; true")))
        return bool(on_overlay & overlays), (
            f"views of pid {pid}: {sorted(mine)} on overlay planes "
            f"{sorted(on_overlay)}; pvdc's overlays {sorted(overlays)}; "
            f"client: {vm.run('tail -3 ' + log)[1]}")
    poll_host("the client's view on a pvdc overlay plane", assigned, 120)
    # The primary plane stays the renderer's (the black backdrop of the
    # fullscreen window): mixed composition.
    modes = vm.check(f"grep -E 'Using [a-z-]+ state composition' "
                     f"{DESKTOP_LOG} | sort | uniq -c")
    if "Using mixed state composition" not in modes:
        raise AssertionError(f"Weston never composed in mixed mode:\n"
                             f"{modes}")

    def scaled_on_screen():
        found = []
        for plane in sorted(on_overlay & overlays):
            rects = plane_rects(vm, plane)
            if not rects or rects[1] != (w, h):
                found.append(f"plane {plane}: {rects}, not the client's "
                             f"{w}x{h} buffer")
                continue
            head, _, (src_w, src_h), (cw, ch, cx, cy) = rects
            scale = cw / src_w
            if scale < 1.2:
                found.append(f"plane {plane}: {src_w}x{src_h} shown at "
                             f"{cw}x{ch}, not scaled up")
                continue
            # The buffer's width holds the seven bars and the black one.
            bar_w = w / (len(VIVID_BARS) + 1) * scale
            row = cy + ch // 2
            runs = bar_runs(vm.screen(head), row)
            # In order from where the plane starts, each bar one run of
            # bar_w pixels (the first and last only from one edge: theirs
            # may be the screen's or black's); runs of a few pixels are
            # the scaler's blend of two bars.
            bars = [(bar, x, n) for bar, x, n in runs if n >= 4]
            got = [bar for bar, _, _ in bars]
            if got != list(range(len(VIVID_BARS))):
                found.append(f"head {head}: bars {got} along row {row}")
                continue
            widths = [n for _, _, n in bars[1:-1]]
            lefts = [x - cx for _, x, _ in bars]
            if all(abs(n - bar_w) <= 3 for n in widths) and \
                    all(abs(x - i * bar_w) <= 3 for i, x in enumerate(lefts)):
                return True, ""
            found.append(f"head {head}: bar widths {widths}, lefts {lefts}, "
                         f"for {bar_w:.1f} (a {w}-pixel buffer scaled "
                         f"x{scale:.2f})")
        return False, "; ".join(found)
    poll_host("vivid's colour bars, scaled, on the screen", scaled_on_screen,
              90)
    vm.stop_background(log)


# -- the package in the running guest ---------------------------------------

def apt_install_builds_for_running_kernel(vm):
    kver = vm.kernel_version
    ko = f"/lib/modules/{kver}/updates/dkms/pvdc.ko"
    vm.check("apt-get remove -y -q pvdc-dkms", DKMS_TIMEOUT)
    rc, _ = vm.run(f"ls {ko}*")
    if rc == 0:
        raise AssertionError("removing pvdc-dkms left the module installed")
    out = vm.check("cd /root && apt-get install -y -q ./pvdc-dkms_*.deb",
                   DKMS_TIMEOUT)
    if f"Building for {kver}" not in out:
        raise AssertionError(f"the postinst did not build for the running "
                             f"kernel {kver}:\n{out[-3000:]}")
    built_by_dkms(vm)


def main():
    tap = Tap()
    try:
        vm = StockGuest(heads=HEADS)
        t0 = time.monotonic()
        vm.start()
        print(f"# stock guest {vm.kernel_version} booted in "
              f"{time.monotonic() - t0:.0f} s")
    except GuestError as e:
        tap.fail("the stock Debian guest boots on pvdc", e)
        return tap.done()
    try:
        tap.case("pvdc.ko was built by DKMS for the running kernel",
                 built_by_dkms, vm)
        tap.case("udev bound pvdc to the device from its PCI modalias",
                 bound_by_modalias, vm)
        tap.case("the boot console shows on head 0 through fbdev emulation",
                 console_on_head0, vm)
        try:
            start_desktop(vm)
        except GuestError as e:
            tap.fail("Weston's DRM backend starts on pvdc", e)
        else:
            tap.case("Weston's DRM backend drives pvdc with atomic "
                     "modesetting", weston_atomic_on_pvdc, vm)
            tap.case("Weston lists pvdc's primary and overlay planes in its "
                 "atomic commits", weston_lists_planes, vm)
            tap.case("both heads are enabled and show the desktop",
                     desktop_on_every_head, vm)
            tap.case("a Wayland client's frame is visible on the screen",
                     client_frame_visible, vm)
            tap.case("Weston puts a client's dma-buf (vivid's camera in "
                     "weston-simple-dmabuf-v4l) on a pvdc overlay plane, "
                     "scaled", client_dmabuf_on_overlay, vm)
        tap.case("apt install ./pvdc-dkms_*.deb builds the module for the "
                 "running kernel", apt_install_builds_for_running_kernel, vm)
    finally:
        vm.stop()
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
