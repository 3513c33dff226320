#!/usr/bin/python3
"""Boot the pvdc demo VM: two heads, the in-guest demo program running.

With --distro the VM is instead the stock Debian 12 guest (Debian's kernel,
pvdc.ko installed as the pvdc-dkms package) booting to a Weston desktop
spread over the heads.

With a graphical display and a QEMU built with GTK, each head gets a GTK
window.  Otherwise each head is served on VNC at 127.0.0.1 and written as a
PNG to a folder, refreshed every few seconds.  Ctrl-C stops the VM cleanly.
"""

import argparse
import os
import signal
import subprocess
import sys
import time

from pvdc_paths import BUILD, ROOT

sys.path.insert(0, os.path.join(ROOT, "tests", "guest"))
from pvdc_harness import (KERNELS, GuestError, GuestVM,  # noqa: E402
                          kernel_log_reports)
from stock_guest import DESKTOP_UNIT, StockGuest  # noqa: E402

# Preferred in-guest programs, best first: the full demo, else a modeset;
# each with what it prints once its picture is on every head.
DEMO_PROGRAMS = [("pvdc-demo", r"^pvdc-demo: head [0-9]"),
                 ("pvdc-modeset 0", r"^# holding")]


def qemu_has_gtk(qemu):
    out = subprocess.run([qemu, "-display", "help"], capture_output=True,
                         text=True).stdout
    return "gtk" in out.split()


def vnc_where(vm, heads):
    """Where QEMU serves each head's VNC display, which it chose itself."""
    servers = {s.get("id"): s for s in vm.cmd("query-vnc-servers")}
    where = []
    for head in range(heads):
        server = servers.get(f"vnc{head}", {}).get("server") or [{}]
        where.append(f"head {head}: vnc://127.0.0.1:"
                     f"{server[0].get('service', '?')}")
    return ", ".join(where)


def start_demo_program(vm):
    for cmd, ready in DEMO_PROGRAMS:
        if vm.run(f"command -v {cmd.split()[0]}")[0] == 0:
            vm.start_background(cmd, ready)
            return cmd
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--heads", type=int, default=2)
    ap.add_argument("--out", default=os.path.join(BUILD, "demo"),
                    help="folder for the per-head PNG screenshots")
    ap.add_argument("--interval", type=float, default=2.0,
                    help="seconds between screenshots")
    ap.add_argument("--duration", type=float, default=0,
                    help="stop after this many seconds (0: until Ctrl-C)")
    ap.add_argument("--no-gtk", action="store_true",
                    help="use VNC and PNGs even when a display is there")
    ap.add_argument("--distro", action="store_true",
                    help="boot the stock Debian 12 guest to a Weston desktop "
                         "instead of the test guest")
    ap.add_argument("--kernel", choices=sorted(KERNELS),
                    help="the test guest's kernel: Debian's (stock, the "
                    "default) or the debug kernel (lockdep, KASAN...)")
    args = ap.parse_args()
    if args.distro and args.kernel:
        ap.error("--kernel picks the test guest's kernel; the stock guest "
                 "(--distro) boots Debian's own")

    os.makedirs(args.out, exist_ok=True)
    if args.distro:
        vm = StockGuest(heads=args.heads,
                        append=f"systemd.wants={DESKTOP_UNIT}")
    else:
        vm = GuestVM(devices=["-device",
                              f"pvdc,id=pvdc0,heads={args.heads}"],
                     kernel=args.kernel)
    use_gtk = (not args.no_gtk and os.environ.get("DISPLAY")
               and qemu_has_gtk(vm.binary))
    if use_gtk:
        vm.display = ["-display", "gtk"]
        where = "a GTK window per head"
    else:
        vm.display = ["-display", "none"]
        # QEMU binds the first free port from 5900 on (to=): two demos
        # started together never pick the same port, as a probe for a
        # free port followed by QEMU's bind could.
        for head in range(args.heads):
            vm.extra_args += ["-vnc", f"127.0.0.1:0,to=99,id=vnc{head},"
                              f"display=pvdc0,head={head}"]
        where = None

    stop = False

    def on_signal(signum, frame):
        nonlocal stop
        stop = True
    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)

    if args.distro:
        print("demo: booting Debian 12 (one to a few minutes under TCG)...",
              flush=True)
    else:
        print("demo: booting the guest (about 10 s under TCG)...", flush=True)
    try:
        vm.start()
        if args.distro:
            vm.wait_for_desktop()
            program = "a Weston desktop"
        else:
            program = start_demo_program(vm)
        print(f"demo: guest {vm.kernel_version} running "
              f"{program or 'the console only'} on {args.heads} heads",
              flush=True)
        print(f"demo: look at {where or vnc_where(vm, args.heads)}",
              flush=True)
        print(f"demo: screenshots every {args.interval:.0f} s in "
              f"{args.out}/head<N>.png; Ctrl-C stops the VM", flush=True)
        t0 = time.monotonic()
        while not stop:
            for head in range(args.heads):
                tmp = os.path.join(args.out, f".head{head}.png")
                vm.screendump(tmp, head=head)
                os.replace(tmp, os.path.join(args.out, f"head{head}.png"))
            if args.duration and time.monotonic() - t0 >= args.duration:
                break
            deadline = time.monotonic() + args.interval
            while not stop and time.monotonic() < deadline:
                time.sleep(0.1)
                if not vm.is_running():
                    raise GuestError(f"QEMU exited{vm.exit_reason()}\n"
                                     f"{vm.tail()}")
        # What the test guest's kernel reported meanwhile (the debug
        # kernel's lockdep, KASAN... or any WARN) fails the demo.
        reports = [] if args.distro else kernel_log_reports(vm.dmesg())
        for kind, line in reports:
            print(f"demo: guest kernel report ({kind}): {line}",
                  file=sys.stderr)
        if reports:
            vm.kill()
            return 1
    except GuestError as e:
        print(f"demo: {e}", file=sys.stderr)
        vm.kill()
        return 1
    finally:
        print("demo: stopping the VM", flush=True)
        vm.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
