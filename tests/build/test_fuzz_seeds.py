#!/usr/bin/python3
"""The fuzz config and corpus reach pvdc's guest memory (TAP).

scripts/fuzz.sh runs QEMU's generic-fuzz on pvdc (the "generic-fuzz-pvdc"
target of tests/qtest/fuzz/pvdc-fuzz-config.h), seeded by the corpus in
tests/qtest/fuzz/pvdc-corpus.  Running it needs a clang build of QEMU,
which the test command does not make; what can be checked without one is
checked here, so that the test command fails when the fuzzer would stop
reaching the BIND block:

- the config's QOM pattern matches the device, so that BAR0, where the
  BIND and DAMAGE registers are (offsets from the register header), is
  what the fuzzer writes;
- the corpus holds the seeds scripts/pvdc_fuzz.py makes of the register
  header now (stale when a register moves; run it again);
- replayed through a model of generic_fuzz.c (commands, DMA patterns
  filling what the device reads by DMA as it reads it, 4- and 8-byte
  accesses to BAR0) and of BIND as the spec states it, with the config's
  VRAM size and guest RAM, the corpus binds pages, unbinds them, has
  BIND refused for each reason a guest can give, has a plane scan out of
  a binding, a writeback target and a colour table in one, and damages
  one.
"""

import fnmatch
import os
import re
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "scripts"))
import pvdc_fuzz as fz  # noqa: E402
from pvdc_paths import ROOT  # noqa: E402
from pvdc_tap import Tap  # noqa: E402

MODEL = ["PVDC_BIND_OK", "PVDC_BIND_ERR_RANGE", "PVDC_BIND_ERR_OVERLAP",
         "PVDC_BIND_ERR_TABLE", "PVDC_BIND_ERR_DMA", "PVDC_BIND_ERR_NOSPC",
         "PVDC_BIND_ERR_NOT_BOUND", "PVDC_MAX_BINDINGS",
         "PVDC_HEAD_CONTROL_BASE", "PVDC_HEAD_SHADOW_BASE",
         "PVDC_HEAD_STRIDE", "PVDC_PLANE_SHADOW_BASE", "PVDC_PLANE_STRIDE",
         "PVDC_HS_CTRL_ENABLE"]
# The q35 guest's RAM below 4 GiB, but for the legacy VGA window and
# the BIOS's ROM shadow, which DMA cannot write.
LEGACY_HOLE = (0xa0000, 0x100000)


class Replay:
    """One input of the corpus through generic_fuzz() and the BIND rules;
    what it reached in self.reached."""

    def __init__(self, r, cfg):
        self.r, self.cfg = r, cfg
        self.heads = int(re.search(r"heads=(\d+)", cfg["args"]).group(1))
        overlays = int(re.search(r"overlays=(\d+)", cfg["args"]).group(1))
        self.planes = self.heads * (overlays + 2)
        self.regs = {}
        self.mem = {}                   # guest RAM written, by byte
        self.patterns = []
        self.pattern_index = 0
        self.regions = []               # DMA filled since the command began
        self.bindings = []              # (addr, size, entries)
        self.armed = set()              # what the last doorbell uses
        self.reached = set()

    # generic_fuzz.c -------------------------------------------------------
    def ram(self, addr, length):
        """Whether [addr, addr + length) is all guest RAM."""
        lo, hi = LEGACY_HOLE
        return 0 <= addr and addr + length <= self.cfg["ram_size"] and \
            not (addr < hi and lo < addr + length)

    def dma_fill(self, addr, length):
        """fuzz_dma_read_cb() with avoid_double_fetches, for RAM."""
        if not self.patterns or not length:
            return
        for a, n in self.regions:
            if addr < a + n and a < addr + length:
                if addr < a:
                    self.dma_fill(addr, a - addr)
                if addr + length > a + n:
                    self.dma_fill(a + n, addr + length - (a + n))
                return
        length = min(length, fz.MAX_DMA_FILL_SIZE)
        self.regions.append((addr, length))
        index, stride, data = self.patterns[self.pattern_index]
        for i, b in enumerate(fz.pattern_bytes(index, stride, data, length)):
            self.mem[addr + i] = b
        self.pattern_index = (self.pattern_index + 1) % len(self.patterns)

    def dma_map(self, addr, length):
        """pvdc_dma_map() of RAM: False if a byte is not RAM."""
        lo, hi = LEGACY_HOLE
        while length:
            if not self.ram(addr, 1):
                return False
            n = min(length, (lo if addr < lo else self.cfg["ram_size"]) - addr)
            self.dma_fill(addr, n)
            addr += n
            length -= n
        return True

    def run(self, data):
        for op, arg in fz.decode(data):
            self.regions = []
            if op == fz.OP_WRITE and len(arg) >= fz.WRITE.size:
                size, _, offset, value = fz.WRITE.unpack_from(arg)
                self.write(size % 4, offset % self.r["PVDC_MMIO_SIZE"], value)
            elif op == fz.OP_ADD_DMA_PATTERN and len(arg) >= 3:
                self.patterns.append((arg[0] % (len(arg) - 2), arg[1],
                                      arg[2:]))
            elif op == fz.OP_CLEAR_DMA_PATTERNS:
                self.patterns, self.pattern_index = [], 0
            elif op == fz.OP_CLOCK_STEP:
                self.reached |= {f"{what} latched" for what in self.armed}

    def write(self, size, offset, value):
        """What reaches pvdc_mmio_write(): 4 bytes, or 8 as two."""
        if size == 2 and offset % 4 == 0:
            self.reg(offset, value & 0xffffffff)
        elif size == 3 and offset % 8 == 0:
            self.reg(offset, value & 0xffffffff)
            self.reg(offset + 4, value >> 32)

    # pvdc ------------------------------------------------------------------
    def reg(self, offset, value):
        r = self.r
        self.regs[offset] = value
        if offset == r["PVDC_REG_BIND_CMD"]:
            if value == r["PVDC_BIND_CMD_BIND"]:
                status = self.bind()
                self.reached.add("BIND " + self.status_name(status))
            elif value == r["PVDC_BIND_CMD_UNBIND"]:
                status = self.unbind()
                self.reached.add("UNBIND " + self.status_name(status))
        elif offset == r["PVDC_REG_DAMAGE_LEN"]:
            addr = self.regs.get(r["PVDC_REG_DAMAGE_ADDR"], 0)
            if self.bound(addr, value, whole=False):
                self.reached.add("DAMAGE of a binding")
        head = (offset - r["PVDC_HEAD_CONTROL_BASE"]) // r["PVDC_HEAD_STRIDE"]
        if 0 <= head < self.heads and \
                offset == self.control(head, "PVDC_HEAD_DOORBELL") and \
                value == r["PVDC_DOORBELL_ARM"]:
            self.armed = self.doorbell(head)

    def status_name(self, status):
        return next(n[len("PVDC_BIND_"):] for n in MODEL
                    if n.startswith("PVDC_BIND_") and self.r[n] == status)

    def control(self, head, reg):
        r = self.r
        return r["PVDC_HEAD_CONTROL_BASE"] + head * r["PVDC_HEAD_STRIDE"] + \
            r[reg]

    def head_reg(self, head, reg):
        r = self.r
        return self.regs.get(r["PVDC_HEAD_SHADOW_BASE"] +
                             head * r["PVDC_HEAD_STRIDE"] + r[reg], 0)

    def plane_reg(self, plane, reg):
        r = self.r
        return self.regs.get(r["PVDC_PLANE_SHADOW_BASE"] +
                             plane * r["PVDC_PLANE_STRIDE"] + r[reg], 0)

    def bound(self, addr, length, whole=True):
        for a, n, _ in self.bindings:
            if whole and a <= addr and addr + length <= a + n:
                return True
            if not whole and addr < a + n and a < addr + length:
                return True
        return False

    def doorbell(self, head):
        """What the commit armed on HEAD reads or writes in a binding."""
        r = self.r
        uses = set()
        ctrl = self.head_reg(head, "PVDC_HS_CTRL")
        if not ctrl & r["PVDC_HS_CTRL_ENABLE"]:
            return uses
        for p in range(self.planes):
            if self.plane_reg(p, "PVDC_PS_CTRL") & r["PVDC_PS_CTRL_ENABLE"] \
                    and self.plane_reg(p, "PVDC_PS_HEAD") == head and \
                    self.bound(self.plane_reg(p, "PVDC_PS_FB_OFFSET"), 1):
                uses.add("a plane in a binding")
        if ctrl & r["PVDC_HS_CTRL_WRITEBACK"] and \
                self.bound(self.head_reg(head, "PVDC_HS_WB_OFFSET"), 1):
            uses.add("a writeback target in a binding")
        if ctrl & r["PVDC_HS_CTRL_DEGAMMA"] and \
                self.bound(self.head_reg(head, "PVDC_HS_DEGAMMA_LUT"), 1):
            uses.add("a colour table in a binding")
        return uses

    def bind(self):
        """pvdc_bind() as the spec orders its rules (no state is in use:
        BUSY is not modelled)."""
        r = self.r
        g = self.regs.get
        addr, size = g(r["PVDC_REG_BIND_ADDR"], 0), g(r["PVDC_REG_BIND_SIZE"], 0)
        table = g(r["PVDC_REG_BIND_TABLE_LO"], 0) | \
            g(r["PVDC_REG_BIND_TABLE_HI"], 0) << 32
        n = g(r["PVDC_REG_BIND_ENTRIES"], 0)
        page = r["PVDC_BIND_PAGE_SIZE"]
        vram = self.cfg["vram_size"]
        if not size or addr % page or size % page or addr < vram or \
                addr + size > 1 << 32:
            return r["PVDC_BIND_ERR_RANGE"]
        if self.bound(addr, size, whole=False):
            return r["PVDC_BIND_ERR_OVERLAP"]
        if len(self.bindings) == r["PVDC_MAX_BINDINGS"]:
            return r["PVDC_BIND_ERR_NOSPC"]
        if table % r["PVDC_BIND_TABLE_ALIGN"] or not n or \
                n > r["PVDC_MAX_BIND_ENTRIES"]:
            return r["PVDC_BIND_ERR_TABLE"]
        if n > r["PVDC_MAX_BIND_ENTRIES"] - \
                sum(len(e) for _, _, e in self.bindings):
            return r["PVDC_BIND_ERR_NOSPC"]
        length = n * r["PVDC_BIND_ENTRY_SIZE"]
        if not self.dma_map(table, length):
            return r["PVDC_BIND_ERR_DMA"]
        raw = bytes(self.mem.get(table + i, 0) for i in range(length))
        entries = list(struct.iter_unpack("<QQ", raw))
        total = 0
        for a, n in entries:
            if not n or a % page or n % page or n > size - total:
                return r["PVDC_BIND_ERR_TABLE"]
            total += n
        if total != size:
            return r["PVDC_BIND_ERR_TABLE"]
        for a, n in entries:
            if not self.dma_map(a, n):
                return r["PVDC_BIND_ERR_DMA"]
        self.bindings.append((addr, size, entries))
        return r["PVDC_BIND_OK"]

    def unbind(self):
        r = self.r
        addr = self.regs.get(r["PVDC_REG_BIND_ADDR"], 0)
        size = self.regs.get(r["PVDC_REG_BIND_SIZE"], 0)
        for b in self.bindings:
            if b[:2] == (addr, size):
                self.bindings.remove(b)     # in use: not modelled
                return r["PVDC_BIND_OK"]
        return r["PVDC_BIND_ERR_NOT_BOUND"]


def main():
    tap = Tap()
    r = fz.registers(MODEL)
    cfg = fz.config()
    with open(os.path.join(ROOT, "hw", "display", "pvdc.h")) as f:
        qom_type = re.search(r'#define TYPE_PVDC "([^"]+)"', f.read()).group(1)
    block = [v for n, v in r.items()
             if n.startswith(("PVDC_REG_BIND_", "PVDC_REG_DAMAGE_"))]
    tap.result(any(fnmatch.fnmatchcase(qom_type, p.lower())
                   for p in cfg["objects"].split()) and
               f"-device {qom_type}," in cfg["args"] and
               max(block) + 4 <= r["PVDC_MMIO_SIZE"],
               "the fuzz config fuzzes the pvdc's BAR0, which holds the "
               "BIND and DAMAGE registers",
               f"objects {cfg['objects']!r}, args {cfg['args']!r}, "
               f"type {qom_type!r}")

    corpus = {}
    for name in sorted(os.listdir(fz.CORPUS)):
        with open(os.path.join(fz.CORPUS, name), "rb") as f:
            corpus[name] = f.read()
    missing = [what for what, data in fz.seeds(r, cfg).items()
               if corpus.get(fz.name_of(data)) != data]
    tap.result(not missing, "the corpus holds the seeds scripts/pvdc_fuzz.py "
               "makes of the register header now",
               [f"missing: {m}" for m in missing] +
               ["(run scripts/pvdc_fuzz.py and commit the corpus)"])

    reached = set()
    for data in corpus.values():
        replay = Replay(r, cfg)
        replay.run(data)
        reached |= replay.reached
    want = ["BIND OK", "UNBIND OK"] + \
        [f"BIND ERR_{e}" for e in ("RANGE", "OVERLAP", "TABLE", "DMA")] + \
        ["UNBIND ERR_NOT_BOUND", "DAMAGE of a binding"] + \
        [f"{u} latched" for u in ("a plane in a binding",
                                  "a writeback target in a binding",
                                  "a colour table in a binding")]
    for what in want:
        tap.result(what in reached, f"an input of the corpus reaches: {what}",
                   f"reached: {sorted(reached)}")
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
