#!/usr/bin/python3
"""Seeds of generic-fuzz-pvdc for the device's guest memory.

    scripts/pvdc_fuzz.py [DIR]

Writes into DIR (default: the repository's corpus,
tests/qtest/fuzz/pvdc-corpus) the inputs that take the fuzzer into the
BIND block and what reads bindings: a BIND of pages whose table the
fuzzer's DMA pattern fills, planes scanning out of a binding (contiguous
in the host and scattered), writeback and a colour table in one, DAMAGE,
UNBIND busy and done, and BINDs refused for each reason.  Random
mutation alone does not get there: a BIND needs a table of page-aligned
entries whose lengths add up to BIND_SIZE, in guest RAM, and five
registers written right before BIND_CMD.  Each file is named by the
SHA-1 of its content, as libFuzzer names what it keeps, so that a merge
(scripts/fuzz.sh --minimize) that keeps a seed keeps its name, and
writing the seeds again changes nothing.

The input format is that of QEMU's tests/qtest/fuzz/generic_fuzz.c:
commands separated by "FUZZ", the first byte of each an opcode modulo
the number of opcodes, its operands the C structs that read them.  MMIO
goes to the pvdc's only fuzzable region, BAR0 (VRAM is RAM, which
generic-fuzz does not fuzz); guest RAM is written by DMA patterns only,
which fill what the device reads by DMA (the table and the pages a BIND
maps) as it reads it.

Register offsets and values are read by compiling
include/hw/display/pvdc-regs.h (nothing is written twice):
tests/build/test_fuzz_seeds.py checks that the corpus holds these seeds
and that they still bind as the spec says, with the fuzz config's
device and RAM.
"""

import argparse
import hashlib
import importlib.util
import os
import re
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pvdc_paths import ROOT  # noqa: E402

_spec = importlib.util.spec_from_file_location(
    "gen_kernel_regs", os.path.join(ROOT, "scripts", "gen-kernel-regs.py"))
regs_gen = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(regs_gen)

HEADER = os.path.join(ROOT, "include", "hw", "display", "pvdc-regs.h")
CONFIG = os.path.join(ROOT, "tests", "qtest", "fuzz", "pvdc-fuzz-config.h")
CORPUS = os.path.join(ROOT, "tests", "qtest", "fuzz", "pvdc-corpus")

# generic_fuzz.c: enum cmds, the separator, the sizes of op_read/op_write.
(OP_IN, OP_OUT, OP_READ, OP_WRITE, OP_PCI_READ, OP_PCI_WRITE,
 OP_DISABLE_PCI, OP_ADD_DMA_PATTERN, OP_CLEAR_DMA_PATTERNS,
 OP_CLOCK_STEP) = range(10)
NUM_OPS = 10
SEPARATOR = b"FUZZ"
SIZE_LONG = 2                   # Byte, Word, Long, Quad
READ = struct.Struct("<BBxxI")  # size, base, offset
WRITE = struct.Struct("<BBxxIQ")  # size, base, offset, value
MAX_DMA_FILL_SIZE = 0x10000
# The head's mode: 64x48, a 1 ms frame at a pixel clock of 4000 kHz.
MODE_W, MODE_H, MODE_HTOTAL, MODE_VTOTAL = 64, 48, 80, 50
MODE_PITCH = MODE_W * 4

# The registers the seeds program, as C expressions of the header.
NAMES = [
    "PVDC_MMIO_SIZE", "PVDC_REG_BIND_ADDR", "PVDC_REG_BIND_SIZE",
    "PVDC_REG_BIND_TABLE_LO", "PVDC_REG_BIND_TABLE_HI",
    "PVDC_REG_BIND_ENTRIES", "PVDC_REG_BIND_CMD", "PVDC_BIND_CMD_BIND",
    "PVDC_BIND_CMD_UNBIND", "PVDC_REG_BIND_STATUS", "PVDC_REG_BIND_SPACE",
    "PVDC_REG_DAMAGE_ADDR", "PVDC_REG_DAMAGE_LEN", "PVDC_BIND_PAGE_SIZE",
    "PVDC_BIND_ENTRY_SIZE", "PVDC_BIND_TABLE_ALIGN", "PVDC_MAX_BIND_ENTRIES",
    "PVDC_HEAD_CONTROL(0)", "PVDC_HEAD_SHADOW(0)", "PVDC_PLANE_SHADOW(0)",
    "PVDC_PLANE_SHADOW(1)", "PVDC_HEAD_DOORBELL", "PVDC_DOORBELL_ARM",
    "PVDC_HEAD_CRC_CTRL", "PVDC_CRC_CTRL_ENABLE", "PVDC_HEAD_CRC_VALUE",
    "PVDC_HS_CTRL", "PVDC_HS_CTRL_ENABLE", "PVDC_HS_CTRL_WRITEBACK",
    "PVDC_HS_CTRL_DEGAMMA", "PVDC_HS_HTIMING", "PVDC_HS_HSYNC",
    "PVDC_HS_VTIMING", "PVDC_HS_VSYNC", "PVDC_HS_PIXEL_CLOCK",
    "PVDC_HS_DEGAMMA_LUT", "PVDC_HS_LUT_SIZES", "PVDC_HS_WB_FORMAT",
    "PVDC_HS_WB_OFFSET", "PVDC_HS_WB_PITCH", "PVDC_LUT_MIN_SIZE",
    "PVDC_PS_CTRL", "PVDC_PS_CTRL_ENABLE", "PVDC_PS_HEAD", "PVDC_PS_FORMAT",
    "PVDC_PS_FB_OFFSET", "PVDC_PS_FB_PITCH", "PVDC_PS_FB_SIZE",
    "PVDC_PS_SRC_X", "PVDC_PS_SRC_Y", "PVDC_PS_SRC_W", "PVDC_PS_SRC_H",
    "PVDC_PS_DST_POS", "PVDC_PS_DST_SIZE", "PVDC_PS_ZPOS", "PVDC_PS_ALPHA",
    "PVDC_FMT_XRGB8888", "PVDC_XY_Y_SHIFT",
]


def registers(extra=()):
    """{name: value} of NAMES and EXTRA, by compiling the register
    header as the driver's header generator does."""
    return regs_gen.evaluate(HEADER, list(dict.fromkeys(NAMES +
                                                        list(extra))))


def config():
    """The fuzz config's QOM pattern, its VRAM size and the guest's RAM
    (generic_fuzz_cmdline()'s -m 512M unless the args give one)."""
    with open(CONFIG) as f:
        text = f.read()
    args = "".join(re.findall(r'"([^"]*)"', text.split(".objects")[0]))
    objects = re.search(r'\.objects\s*=\s*"([^"]*)"', text).group(1)
    unit = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    vram = re.search(r"vram-size=(\d+)([KMG]?)", args)
    ram = re.search(r"-m (\d+)([KMG]?)", args)
    return {"args": args, "objects": objects,
            "vram_size": int(vram.group(1)) * unit[vram.group(2)]
            if vram else None,
            "ram_size": int(ram.group(1)) * unit[ram.group(2)]
            if ram else 512 << 20}


# ---------------------------------------------------------------------------
# The input format
# ---------------------------------------------------------------------------

def encode(commands):
    """An input of COMMANDS, each (opcode, operand bytes)."""
    out = [bytes([op]) + data for op, data in commands]
    for c in out:
        assert SEPARATOR not in c, c
    return SEPARATOR.join(out)


def decode(data):
    """The commands generic_fuzz() runs for input DATA: (opcode, bytes)."""
    out = []
    for cmd in data.split(SEPARATOR):
        if cmd:
            out.append((cmd[0] % NUM_OPS, cmd[1:]))
    return out


def pattern_bytes(index, stride, data, length):
    """pattern_alloc(): DATA repeated over LENGTH bytes, byte INDEX of the
    n-th repetition increased by n * STRIDE (mod 256)."""
    index %= len(data)
    buf = bytearray(length)
    total = 0
    for i in range(length):
        buf[i] = data[i % len(data)]
        if i % len(data) == index:
            buf[i] = (buf[i] + total) & 0xff
            total = (total + stride) & 0xff
    return bytes(buf)


class Seed:
    """Builds the commands of one input against the register map R."""

    def __init__(self, r):
        self.r = r
        self.commands = []

    def wr(self, reg, value):
        self.commands.append((OP_WRITE, WRITE.pack(SIZE_LONG, 0, reg,
                                                   value & 0xffffffff)))

    def rd(self, reg):
        self.commands.append((OP_READ, READ.pack(SIZE_LONG, 0, reg)))

    def pattern(self, entries, index=0, stride=0):
        """The table of ENTRIES (address, length) as the DMA pattern,
        whose byte INDEX grows by STRIDE per repetition."""
        data = b"".join(struct.pack("<QQ", a, n) for a, n in entries)
        self.commands.append((OP_ADD_DMA_PATTERN,
                              bytes([index, stride]) + data))

    def clear_patterns(self):
        self.commands.append((OP_CLEAR_DMA_PATTERNS, b""))

    def step(self, n=1):
        self.commands += [(OP_CLOCK_STEP, b"")] * n

    def bind(self, cmd, addr, size, table, entries):
        r = self.r
        self.wr(r["PVDC_REG_BIND_ADDR"], addr)
        self.wr(r["PVDC_REG_BIND_SIZE"], size)
        self.wr(r["PVDC_REG_BIND_TABLE_LO"], table)
        self.wr(r["PVDC_REG_BIND_TABLE_HI"], table >> 32)
        self.wr(r["PVDC_REG_BIND_ENTRIES"], entries)
        self.wr(r["PVDC_REG_BIND_CMD"], r[cmd])
        self.rd(r["PVDC_REG_BIND_STATUS"])

    def head(self, ctrl_bits=0):
        """Head 0 on in a 64x48 mode of 1 ms frames, CRC on, so that
        reading CRC_VALUE (crc()) composes its frame."""
        r, hs = self.r, self.r["PVDC_HEAD_SHADOW(0)"]
        xy = self.xy
        self.wr(hs + r["PVDC_HS_HTIMING"], xy(MODE_W, MODE_HTOTAL))
        self.wr(hs + r["PVDC_HS_HSYNC"], xy(MODE_W, MODE_HTOTAL))
        self.wr(hs + r["PVDC_HS_VTIMING"], xy(MODE_H, MODE_VTOTAL))
        self.wr(hs + r["PVDC_HS_VSYNC"], xy(MODE_H, MODE_VTOTAL))
        self.wr(hs + r["PVDC_HS_PIXEL_CLOCK"], MODE_HTOTAL * MODE_VTOTAL)
        self.wr(hs + r["PVDC_HS_CTRL"], r["PVDC_HS_CTRL_ENABLE"] | ctrl_bits)
        self.wr(r["PVDC_HEAD_CONTROL(0)"] + r["PVDC_HEAD_CRC_CTRL"],
                r["PVDC_CRC_CTRL_ENABLE"])

    def xy(self, x, y):
        return x | y << self.r["PVDC_XY_Y_SHIFT"]

    def plane(self, plane, offset, zpos, dst_w=MODE_W, dst_h=MODE_H):
        """Plane PLANE of head 0 on, a MODE_W x MODE_H XRGB8888
        framebuffer at device address OFFSET, shown DST_W x DST_H."""
        r, ps = self.r, self.r[f"PVDC_PLANE_SHADOW({plane})"]
        self.wr(ps + r["PVDC_PS_HEAD"], 0)
        self.wr(ps + r["PVDC_PS_FORMAT"], r["PVDC_FMT_XRGB8888"])
        self.wr(ps + r["PVDC_PS_FB_OFFSET"], offset)
        self.wr(ps + r["PVDC_PS_FB_PITCH"], MODE_PITCH)
        self.wr(ps + r["PVDC_PS_FB_SIZE"], self.xy(MODE_W, MODE_H))
        self.wr(ps + r["PVDC_PS_SRC_X"], 0)
        self.wr(ps + r["PVDC_PS_SRC_Y"], 0)
        self.wr(ps + r["PVDC_PS_SRC_W"], MODE_W << 16)
        self.wr(ps + r["PVDC_PS_SRC_H"], MODE_H << 16)
        self.wr(ps + r["PVDC_PS_DST_POS"], 0)
        self.wr(ps + r["PVDC_PS_DST_SIZE"], self.xy(dst_w, dst_h))
        self.wr(ps + r["PVDC_PS_ZPOS"], zpos)
        self.wr(ps + r["PVDC_PS_ALPHA"], 0xffff)
        self.wr(ps + r["PVDC_PS_CTRL"], r["PVDC_PS_CTRL_ENABLE"])

    def crc(self):
        r = self.r
        self.rd(r["PVDC_HEAD_CONTROL(0)"] + r["PVDC_HEAD_CRC_VALUE"])

    def doorbell(self):
        r = self.r
        self.wr(r["PVDC_HEAD_CONTROL(0)"] + r["PVDC_HEAD_DOORBELL"],
                r["PVDC_DOORBELL_ARM"])

    def damage(self, addr, length):
        self.wr(self.r["PVDC_REG_DAMAGE_ADDR"], addr)
        self.wr(self.r["PVDC_REG_DAMAGE_LEN"], length)

    def shown_then_damaged(self, addr, length):
        """Arm head 0, let it latch and compose (a CRC read), then
        report ADDR..ADDR+LENGTH as damaged and compose again."""
        self.doorbell()
        self.step(3)
        self.crc()
        self.damage(addr, length)
        self.step()
        self.crc()

    def data(self):
        return encode(self.commands)


# Guest RAM the seeds use: the table at 2 MiB, the pages from 16 MiB.
TABLE = 0x200000
PAGES = 0x1000000


def seeds(r=None, cfg=None):
    """{short name: input} of the seeds."""
    r = r or registers()
    cfg = cfg or config()
    page = r["PVDC_BIND_PAGE_SIZE"]
    base = cfg["vram_size"]     # the first device address bindings may use
    fb_size = MODE_PITCH * MODE_H
    npages = -(-fb_size // page)
    # One entry per page, the pages consecutive: byte 1 of the address
    # (bits 8-15) grows by page >> 8 per entry.
    contiguous = dict(entries=[(PAGES, page)], index=1, stride=page >> 8)
    # Every other page: a binding read through its runs, not in place.
    scattered = dict(entries=[(PAGES, page)], index=1, stride=2 * page >> 8)
    size = npages * page
    out = {}

    s = Seed(r)
    s.pattern(**contiguous)
    s.bind("PVDC_BIND_CMD_BIND", base, size, TABLE, npages)
    s.damage(base, page)
    s.bind("PVDC_BIND_CMD_UNBIND", base, size, 0, 0)
    out["bind-damage-unbind"] = s.data()

    s = Seed(r)
    s.pattern(**contiguous)
    s.bind("PVDC_BIND_CMD_BIND", base, size, TABLE, npages)
    s.head()
    s.plane(0, base, 0)
    s.shown_then_damaged(base, fb_size)
    s.bind("PVDC_BIND_CMD_UNBIND", base, size, 0, 0)     # busy
    out["primary-in-binding"] = s.data()

    s = Seed(r)
    s.pattern(**scattered)
    s.bind("PVDC_BIND_CMD_BIND", base, size, TABLE, npages)
    s.head()
    s.plane(0, 0, 0)                                     # VRAM
    s.plane(1, base, 1, MODE_W // 2, MODE_H // 2)        # scaled
    s.shown_then_damaged(base, fb_size)
    out["scattered-overlay"] = s.data()

    # Writeback into one binding, the degamma LUT in another.
    lut = base + size
    s = Seed(r)
    s.pattern(**contiguous)
    s.bind("PVDC_BIND_CMD_BIND", base, size, TABLE, npages)
    s.clear_patterns()
    s.pattern(entries=[(PAGES + size, page)])
    s.bind("PVDC_BIND_CMD_BIND", lut, page, TABLE, 1)
    hs = r["PVDC_HEAD_SHADOW(0)"]
    s.head(r["PVDC_HS_CTRL_WRITEBACK"] | r["PVDC_HS_CTRL_DEGAMMA"])
    s.wr(hs + r["PVDC_HS_WB_FORMAT"], r["PVDC_FMT_XRGB8888"])
    s.wr(hs + r["PVDC_HS_WB_OFFSET"], base)
    s.wr(hs + r["PVDC_HS_WB_PITCH"], MODE_PITCH)
    s.wr(hs + r["PVDC_HS_DEGAMMA_LUT"], lut)
    s.wr(hs + r["PVDC_HS_LUT_SIZES"],
         s.xy(r["PVDC_LUT_MIN_SIZE"], r["PVDC_LUT_MIN_SIZE"]))
    s.plane(0, 0, 0)
    s.doorbell()
    s.step(3)
    out["writeback-lut-in-bindings"] = s.data()

    # Refused: each rule of BIND once.
    s = Seed(r)
    s.rd(r["PVDC_REG_BIND_SPACE"])
    s.pattern(**contiguous)
    s.bind("PVDC_BIND_CMD_BIND", base + 1, size, TABLE, npages)  # RANGE
    s.bind("PVDC_BIND_CMD_BIND", base, size, TABLE + 1, npages)  # TABLE
    s.bind("PVDC_BIND_CMD_BIND", base, size, TABLE, 0)
    s.bind("PVDC_BIND_CMD_BIND", base, size, TABLE,
           r["PVDC_MAX_BIND_ENTRIES"] + 1)
    s.bind("PVDC_BIND_CMD_BIND", base, size, TABLE, npages - 1)
    s.bind("PVDC_BIND_CMD_BIND", base, size, cfg["ram_size"], npages)  # DMA
    s.bind("PVDC_BIND_CMD_BIND", base, size, TABLE, npages)
    s.bind("PVDC_BIND_CMD_BIND", base, size, TABLE, npages)  # OVERLAP
    s.bind("PVDC_BIND_CMD_UNBIND", base, page, 0, 0)         # NOT_BOUND
    s.clear_patterns()
    # Pages across the end of RAM.
    s.pattern(entries=[(cfg["ram_size"] - page, size)])
    s.bind("PVDC_BIND_CMD_BIND", base + size, size, TABLE, 1)
    s.damage(0xffffffff & ~(page - 1), 2 * page)             # clipped
    out["bind-refused"] = s.data()
    return out


def name_of(data):
    return hashlib.sha1(data).hexdigest()


def main():
    ap = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="\n".join(__doc__.splitlines()[4:]))
    ap.add_argument("dir", nargs="?", default=CORPUS,
                    help="where to write the seeds (default: %(default)s)")
    out = ap.parse_args().dir
    os.makedirs(out, exist_ok=True)
    for data in seeds().values():
        with open(os.path.join(out, name_of(data)), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
