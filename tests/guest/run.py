#!/usr/bin/python3
"""Boot the test guest and run commands in it, for manual use.

    tests/guest/run.py [-d DEVICE-OPTIONS] [-a APPEND] [-k KERNEL] [--dmesg]
                       CMD...

Each CMD is one shell command line run in the guest; its output and exit
status are printed.  The guest image comes from build/meson (run
`meson compile -C build/meson` after changing the driver or programs).
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pvdc_harness import KERNELS, GuestError, GuestVM  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-d", "--device", default="pvdc,id=pvdc0",
                    help="-device options (default: %(default)s)")
    ap.add_argument("-a", "--append", default="",
                    help="extra kernel command line")
    ap.add_argument("-k", "--kernel", choices=sorted(KERNELS),
                    help="guest kernel (default: stock, Debian's)")
    ap.add_argument("-t", "--timeout", type=float, default=120,
                    help="timeout of each command in seconds")
    ap.add_argument("--dmesg", action="store_true",
                    help="print the kernel log at the end")
    ap.add_argument("commands", nargs="*")
    args = ap.parse_args()

    status = 0
    try:
        with GuestVM(devices=["-device", args.device],
                     append=args.append, kernel=args.kernel) as vm:
            print(f"# guest {vm.kernel_version} up")
            for cmd in args.commands:
                rc, out = vm.run(cmd, args.timeout)
                print(f"$ {cmd}\n{out}# exit {rc}")
                status = status or rc
            if args.dmesg:
                print(vm.dmesg())
    except GuestError as e:
        print(f"run.py: {e}", file=sys.stderr)
        return 2
    return 1 if status else 0


if __name__ == "__main__":
    sys.exit(main())
