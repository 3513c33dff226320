/*
 * QTest cases for pvdc's guest memory: ranges of guest pages bound into
 * the device address space above VRAM (BIND_*), as docs/specs/pvdc.rst
 * specifies them.
 *
 * Every BIND checks its range, its table and every page before it maps
 * anything: each hostile case below has its BIND_STATUS, and leaves the
 * device as it was (the bindings it holds, x-bindings).  The guest pages
 * come from libqos' allocator, one page at a time and listed in reverse
 * order, so that no binding is contiguous in guest memory.  Run under
 * ASan and LeakSanitizer by the qtest-memory-asan suite: a mapping left
 * behind by a reset, an unplug or a refused bind is reported there.
 *
 * Copyright (c) 2026 The pvdc authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "hw/acpi/pc-hotplug.h"
#include "libqos/libqos-malloc.h"
#include "libqos/malloc-pc.h"
#include "pvdc-qtest.h"

#define PAGE                PVDC_BIND_PAGE_SIZE
#define RAM_SIZE            (128 * MiB)
#define PROPS               "vram-size=16M"
#define EXTRA               "-m 128M"
/*
 * Guest RAM in a memfd the host can map again: bindings get a contiguous
 * host view of their pages.
 */
#define EXTRA_MEMFD         "-m 128M -object memory-backend-memfd,id=ram," \
                            "size=128M -machine memory-backend=ram"
/* pages of the scattered buffer */
#define BUF_PAGES           16

typedef struct Mem {
    PVDCTest t;
    QGuestAllocator alloc;
    uint64_t table;             /* room for TABLE_ROOM entries */
    uint64_t pages[BUF_PAGES];  /* allocated in this order */
    uint32_t base;              /* the first device address above VRAM */
} Mem;

#define TABLE_ROOM          256

/* pvdc with @props, the machine with @extra on its command line. */
static void mem_start_props(Mem *m, const char *props, const char *extra)
{
    pvdc_test_start_with(&m->t, props, extra);
    pc_alloc_init(&m->alloc, m->t.qts, ALLOC_NO_FLAGS);
    m->table = guest_alloc(&m->alloc, TABLE_ROOM * PVDC_BIND_ENTRY_SIZE);
    for (int i = 0; i < BUF_PAGES; i++) {
        m->pages[i] = guest_alloc(&m->alloc, PAGE);
        g_assert_cmpuint(m->pages[i] % PAGE, ==, 0);
    }
    m->base = m->t.vram_size;
}

/* The machine with @extra (EXTRA or EXTRA_MEMFD) on its command line. */
static void mem_start_with(Mem *m, const char *extra)
{
    mem_start_props(m, PROPS, extra);
}

static void mem_start(Mem *m)
{
    mem_start_with(m, EXTRA);
}

static void mem_stop(Mem *m)
{
    alloc_destroy(&m->alloc);
    pvdc_test_stop(&m->t);
}

static uint32_t bindings(Mem *m)
{
    return pvdc_statistic(m->t.qts, "x-bindings");
}

/* Bind the scattered buffer, its pages in reverse order, at @addr. */
static uint32_t bind_scattered(Mem *m, uint32_t addr)
{
    uint64_t e[2 * BUF_PAGES];

    for (int i = 0; i < BUF_PAGES; i++) {
        e[2 * i] = m->pages[BUF_PAGES - 1 - i];
        e[2 * i + 1] = PAGE;
    }
    pvdc_write_bind_table(&m->t, m->table, e, BUF_PAGES);
    return pvdc_bind_range(&m->t, addr, BUF_PAGES * PAGE, m->table, BUF_PAGES);
}

/* Bind @size bytes at @addr to one entry: @entry_addr, @entry_len. */
static uint32_t bind_one(Mem *m, uint32_t addr, uint32_t size,
                         uint64_t entry_addr, uint64_t entry_len)
{
    uint64_t e[2] = { entry_addr, entry_len };

    pvdc_write_bind_table(&m->t, m->table, e, 1);
    return pvdc_bind_range(&m->t, addr, size, m->table, 1);
}

static void test_device_offers_guest_memory(void)
{
    static const uint32_t regs[] = {
        PVDC_REG_BIND_ADDR, PVDC_REG_BIND_SIZE, PVDC_REG_BIND_TABLE_LO,
        PVDC_REG_BIND_TABLE_HI, PVDC_REG_BIND_ENTRIES,
    };
    PVDCTest t;

    pvdc_test_start(&t, PROPS);
    g_assert_cmphex(pvdc_rd(&t, PVDC_REG_VERSION), ==,
                    PVDC_VERSION_MAJOR << PVDC_VERSION_MAJOR_SHIFT |
                    PVDC_VERSION_MINOR << PVDC_VERSION_MINOR_SHIFT);
    g_assert_cmpuint(pvdc_rd(&t, PVDC_REG_NUM_BINDINGS), ==, PVDC_MAX_BINDINGS);
    g_assert_cmphex(pvdc_rd(&t, PVDC_REG_BIND_STATUS), ==, PVDC_BIND_OK);
    for (int i = 0; i < ARRAY_SIZE(regs); i++) {
        g_assert_cmphex(pvdc_rd(&t, regs[i]), ==, 0);
        pvdc_wr(&t, regs[i], 0xdead0000 + i);
        g_assert_cmphex(pvdc_rd(&t, regs[i]), ==, 0xdead0000 + i);
    }
    /* Read-only: the status and the limit stay. */
    pvdc_wr(&t, PVDC_REG_BIND_STATUS, PVDC_BIND_ERR_DMA);
    pvdc_wr(&t, PVDC_REG_NUM_BINDINGS, 1);
    g_assert_cmphex(pvdc_rd(&t, PVDC_REG_BIND_STATUS), ==, PVDC_BIND_OK);
    g_assert_cmpuint(pvdc_rd(&t, PVDC_REG_NUM_BINDINGS), ==, PVDC_MAX_BINDINGS);
    g_assert_cmpuint(pvdc_rd(&t, PVDC_REG_BIND_CMD), ==, 0);
    pvdc_test_stop(&t);
}

static void test_scattered_pages_bind_and_unbind(void)
{
    uint32_t size = BUF_PAGES * PAGE;
    uint64_t repeated[4];
    Mem m;

    mem_start(&m);
    repeated[0] = repeated[2] = m.pages[0];
    repeated[1] = repeated[3] = PAGE;
    g_assert_cmphex(bind_scattered(&m, m.base), ==, PVDC_BIND_OK);
    g_assert_cmpuint(bindings(&m), ==, 1);
    /* The same page twice, in one binding and in two: just pages. */
    pvdc_write_bind_table(&m.t, m.table, repeated, 2);
    g_assert_cmphex(pvdc_bind_range(&m.t, m.base + size, 2 * PAGE, m.table, 2),
                    ==, PVDC_BIND_OK);
    g_assert_cmpuint(bindings(&m), ==, 2);

    /* An unknown command changes nothing, the status included. */
    pvdc_wr(&m.t, PVDC_REG_BIND_CMD, 3);
    g_assert_cmphex(pvdc_rd(&m.t, PVDC_REG_BIND_STATUS), ==, PVDC_BIND_OK);
    g_assert_cmpuint(bindings(&m), ==, 2);

    /* Only exactly one binding unbinds. */
    g_assert_cmphex(pvdc_unbind_range(&m.t, m.base, size / 2), ==,
                    PVDC_BIND_ERR_NOT_BOUND);
    g_assert_cmphex(pvdc_unbind_range(&m.t, m.base + PAGE, size - PAGE), ==,
                    PVDC_BIND_ERR_NOT_BOUND);
    g_assert_cmphex(pvdc_unbind_range(&m.t, m.base, size + 2 * PAGE), ==,
                    PVDC_BIND_ERR_NOT_BOUND);
    g_assert_cmpuint(bindings(&m), ==, 2);
    g_assert_cmphex(pvdc_unbind_range(&m.t, m.base, size), ==, PVDC_BIND_OK);
    g_assert_cmpuint(bindings(&m), ==, 1);
    g_assert_cmphex(pvdc_unbind_range(&m.t, m.base, size), ==,
                    PVDC_BIND_ERR_NOT_BOUND);
    g_assert_cmphex(pvdc_unbind_range(&m.t, m.base + size, 2 * PAGE), ==,
                    PVDC_BIND_OK);
    g_assert_cmpuint(bindings(&m), ==, 0);
    /* The range is free again. */
    g_assert_cmphex(bind_scattered(&m, m.base), ==, PVDC_BIND_OK);
    mem_stop(&m);
}

/*
 * BIND_SPACE is the address space above VRAM: the rest of 2^32, or what
 * x-bind-space leaves a test; a binding ends at its end at the latest.
 */
#define SMALL_BIND_SPACE    (16 * PAGE)

static void test_bind_space_bounds_bindings(void)
{
    g_autofree char *props =
        g_strdup_printf(PROPS ",x-bind-space=%d", SMALL_BIND_SPACE);
    Mem m;

    mem_start(&m);
    g_assert_cmphex(pvdc_rd(&m.t, PVDC_REG_BIND_SPACE), ==,
                    4 * GiB - m.t.vram_size);
    /* Read-only. */
    pvdc_wr(&m.t, PVDC_REG_BIND_SPACE, SMALL_BIND_SPACE);
    g_assert_cmphex(pvdc_rd(&m.t, PVDC_REG_BIND_SPACE), ==,
                    4 * GiB - m.t.vram_size);
    mem_stop(&m);

    mem_start_props(&m, props, EXTRA);
    g_assert_cmphex(pvdc_rd(&m.t, PVDC_REG_BIND_SPACE), ==, SMALL_BIND_SPACE);
    g_assert_cmphex(bind_one(&m, m.base + SMALL_BIND_SPACE, PAGE, m.pages[0],
                             PAGE), ==, PVDC_BIND_ERR_RANGE);
    g_assert_cmphex(bind_one(&m, m.base + SMALL_BIND_SPACE - PAGE, 2 * PAGE,
                             m.pages[0], 2 * PAGE), ==, PVDC_BIND_ERR_RANGE);
    g_assert_cmpuint(bindings(&m), ==, 0);
    /* Its last page binds. */
    g_assert_cmphex(bind_one(&m, m.base + SMALL_BIND_SPACE - PAGE, PAGE,
                             m.pages[0], PAGE), ==, PVDC_BIND_OK);
    g_assert_cmpuint(bindings(&m), ==, 1);
    mem_stop(&m);
}

static void test_hostile_ranges_are_refused(void)
{
    Mem m;

    mem_start(&m);
    const struct {
        uint32_t addr, size, status;
    } cases[] = {
        { m.base + 1, PAGE, PVDC_BIND_ERR_RANGE },
        { m.base + PAGE / 2, PAGE, PVDC_BIND_ERR_RANGE },
        { m.base, 0, PVDC_BIND_ERR_RANGE },
        { m.base, PAGE + 8, PVDC_BIND_ERR_RANGE },
        { 0, PAGE, PVDC_BIND_ERR_RANGE },                   /* VRAM */
        { m.base - PAGE, 2 * PAGE, PVDC_BIND_ERR_RANGE },   /* its end */
        { 0xfffff000, 2 * PAGE, PVDC_BIND_ERR_RANGE },      /* past 2^32 */
        { 0xfffff000, 0xfffff000, PVDC_BIND_ERR_RANGE },
        { m.base, 0xfffff000, PVDC_BIND_ERR_RANGE },
        { m.base, UINT32_MAX, PVDC_BIND_ERR_RANGE },       /* 2^32 - 1 */
    };

    for (int i = 0; i < ARRAY_SIZE(cases); i++) {
        g_test_message("0x%x+0x%x", cases[i].addr, cases[i].size);
        g_assert_cmphex(bind_one(&m, cases[i].addr, cases[i].size,
                                 m.pages[0], cases[i].size), ==,
                        cases[i].status);
    }
    g_assert_cmpuint(bindings(&m), ==, 0);

    /* The last page of the device address space binds. */
    g_assert_cmphex(bind_one(&m, 0xfffff000, PAGE, m.pages[0], PAGE), ==,
                    PVDC_BIND_OK);
    /* Bindings do not overlap, but may touch. */
    g_assert_cmphex(bind_scattered(&m, m.base + 4 * PAGE), ==,
                    PVDC_BIND_OK);
    g_assert_cmphex(bind_scattered(&m, m.base + 8 * PAGE), ==,
                    PVDC_BIND_ERR_OVERLAP);
    g_assert_cmphex(bind_scattered(&m, m.base), ==, PVDC_BIND_ERR_OVERLAP);
    g_assert_cmphex(bind_one(&m, m.base + (4 + BUF_PAGES - 1) * PAGE, PAGE,
                             m.pages[0], PAGE), ==, PVDC_BIND_ERR_OVERLAP);
    g_assert_cmphex(bind_one(&m, 0xffffe000, 2 * PAGE, m.pages[0], 2 * PAGE),
                    ==, PVDC_BIND_ERR_OVERLAP);
    g_assert_cmpuint(bindings(&m), ==, 2);
    g_assert_cmphex(bind_one(&m, m.base + 3 * PAGE, PAGE, m.pages[0], PAGE),
                    ==, PVDC_BIND_OK);
    g_assert_cmphex(bind_one(&m, m.base + (4 + BUF_PAGES) * PAGE, PAGE,
                             m.pages[0], PAGE), ==, PVDC_BIND_OK);
    g_assert_cmpuint(bindings(&m), ==, 4);
    mem_stop(&m);
}

static void test_hostile_tables_are_refused(void)
{
    Mem m;
    uint32_t status;

    mem_start(&m);
    uint64_t p0 = m.pages[0], p1 = m.pages[1];
    const struct {
        const char *what;
        uint64_t e[4];
        uint32_t n;
    } cases[] = {
        { "entry address misaligned", { p0 + 8, PAGE, p1, PAGE }, 2 },
        { "entry address in a page", { p0, PAGE, p1 + PAGE / 2, PAGE }, 2 },
        { "entry of length 0", { p0, 0, p1, 2 * PAGE }, 2 },
        { "entry length misaligned", { p0, PAGE + 1, p1, PAGE - 1 }, 2 },
        { "lengths short", { p0, PAGE, 0, 0 }, 1 },
        { "lengths long", { p0, PAGE, p1, 2 * PAGE }, 2 },
        { "lengths overflow 64 bits", { p0, 2 * PAGE, p1, -(uint64_t)PAGE },
          2 },
        { "lengths wrap to the size",
          { p0, 3 * PAGE, p1, -(uint64_t)PAGE }, 2 },
    };

    for (int i = 0; i < ARRAY_SIZE(cases); i++) {
        g_test_message("%s", cases[i].what);
        pvdc_write_bind_table(&m.t, m.table, cases[i].e, cases[i].n);
        g_assert_cmphex(pvdc_bind_range(&m.t, m.base, 2 * PAGE, m.table,
                                        cases[i].n), ==, PVDC_BIND_ERR_TABLE);
    }

    /* The table itself: aligned, 1..PVDC_MAX_BIND_ENTRIES entries. */
    {
        uint64_t e[] = { p1, PAGE };

        g_assert_cmphex(pvdc_bind_range(&m.t, m.base, PAGE, m.table + 4, 1), ==,
                        PVDC_BIND_ERR_TABLE);
        g_assert_cmphex(pvdc_bind_range(&m.t, m.base, PAGE, m.table, 0), ==,
                        PVDC_BIND_ERR_TABLE);
        g_assert_cmphex(pvdc_bind_range(&m.t, m.base, PAGE, m.table,
                                        UINT32_MAX), ==, PVDC_BIND_ERR_TABLE);
        g_assert_cmphex(pvdc_bind_range(&m.t, m.base, PAGE, m.table,
                                        PVDC_MAX_BIND_ENTRIES + 1), ==,
                        PVDC_BIND_ERR_TABLE);
        g_assert_cmpuint(bindings(&m), ==, 0);
        /* 8-byte aligned is enough: the entry at table + 8 */
        pvdc_write_bind_table(&m.t, m.table + 8, e, 1);
        status = pvdc_bind_range(&m.t, m.base, PAGE, m.table + 8, 1);
        g_assert_cmphex(status, ==, PVDC_BIND_OK);
    }
    g_assert_cmpuint(bindings(&m), ==, 1);
    mem_stop(&m);
}

/*
 * Tables and pages that are not guest RAM: the device reads and maps
 * nothing of them.  Its own register BAR read by DMA would re-enter the
 * device (CVE-2021-3750); MMIO of any kind, ROM and addresses past RAM
 * are refused alike.
 */
static void test_memory_that_is_not_ram_is_refused(void)
{
    Mem m;

    mem_start(&m);
    const uint64_t bar0 = m.t.mmio.addr, vram = m.t.vram.addr;
    const struct {
        const char *what;
        uint64_t addr;
        uint64_t len;
    } where[] = {
        { "the register BAR", bar0, PAGE },
        { "the register BAR's doorbells",
          bar0 + PVDC_HEAD_CONTROL_BASE, PAGE },
        { "the VRAM BAR", vram, PAGE },
        { "past RAM, below 4 GiB", RAM_SIZE, PAGE },
        { "past RAM, above 4 GiB", 4 * GiB, PAGE },
        { "the top of the address space", -(uint64_t)PAGE, PAGE },
        { "across the end of RAM", RAM_SIZE - PAGE, 2 * PAGE },
        { "the BIOS ROM", 0xfffc0000, PAGE },
    };

    for (int i = 0; i < ARRAY_SIZE(where); i++) {
        g_test_message("pages in %s", where[i].what);
        g_assert_cmphex(bind_one(&m, m.base, where[i].len, where[i].addr,
                                 where[i].len), ==, PVDC_BIND_ERR_DMA);

        /* A table there, of entries that would be valid. */
        if (where[i].addr % PAGE == 0 && where[i].addr != RAM_SIZE - PAGE) {
            g_test_message("table in %s", where[i].what);
            g_assert_cmphex(pvdc_bind_range(&m.t, m.base, PAGE, where[i].addr,
                                            1), ==, PVDC_BIND_ERR_DMA);
        }
    }
    /* A table whose last entry runs past the end of RAM. */
    {
        uint64_t e[] = { m.pages[0], PAGE };

        pvdc_write_bind_table(&m.t, RAM_SIZE - PVDC_BIND_ENTRY_SIZE, e, 1);
        g_assert_cmphex(pvdc_bind_range(&m.t, m.base, 2 * PAGE,
                                        RAM_SIZE - PVDC_BIND_ENTRY_SIZE, 2), ==,
                        PVDC_BIND_ERR_DMA);
        /* its first entry alone is RAM */
        g_assert_cmphex(pvdc_bind_range(&m.t, m.base, PAGE,
                                        RAM_SIZE - PVDC_BIND_ENTRY_SIZE, 1), ==,
                        PVDC_BIND_OK);
        g_assert_cmphex(pvdc_unbind_range(&m.t, m.base, PAGE), ==,
                        PVDC_BIND_OK);
    }
    /* One bad entry among good ones: nothing stays mapped. */
    {
        uint64_t e[] = { m.pages[0], PAGE, m.pages[1], PAGE, bar0, PAGE };

        pvdc_write_bind_table(&m.t, m.table, e, 3);
        g_assert_cmphex(pvdc_bind_range(&m.t, m.base, 3 * PAGE, m.table, 3), ==,
                        PVDC_BIND_ERR_DMA);
    }
    g_assert_cmpuint(bindings(&m), ==, 0);
    /* The last page of RAM is RAM. */
    g_assert_cmphex(bind_one(&m, m.base, PAGE, RAM_SIZE - PAGE, PAGE), ==,
                    PVDC_BIND_OK);
    g_assert_cmpuint(bindings(&m), ==, 1);
    mem_stop(&m);
}

static void set_bus_master(PVDCTest *t, bool on)
{
    uint16_t cmd = qpci_config_readw(t->dev, PCI_COMMAND);

    cmd = on ? cmd | PCI_COMMAND_MASTER : cmd & ~PCI_COMMAND_MASTER;
    qpci_config_writew(t->dev, PCI_COMMAND, cmd);
}

/* Without bus mastering the device reaches no memory, but keeps what it has. */
static void test_bus_mastering_off_refuses_binds(void)
{
    Mem m;

    mem_start(&m);
    g_assert_cmphex(bind_scattered(&m, m.base), ==, PVDC_BIND_OK);
    set_bus_master(&m.t, false);
    g_assert_cmphex(bind_scattered(&m, m.base + BUF_PAGES * PAGE), ==,
                    PVDC_BIND_ERR_DMA);
    g_assert_cmpuint(bindings(&m), ==, 1);
    set_bus_master(&m.t, true);
    g_assert_cmphex(bind_scattered(&m, m.base + BUF_PAGES * PAGE), ==,
                    PVDC_BIND_OK);
    set_bus_master(&m.t, false);
    /* Unbinding needs no DMA. */
    g_assert_cmphex(pvdc_unbind_range(&m.t, m.base, BUF_PAGES * PAGE), ==,
                    PVDC_BIND_OK);
    g_assert_cmpuint(bindings(&m), ==, 1);
    mem_stop(&m);
}

/* PVDC_MAX_BINDINGS bindings, and PVDC_MAX_BIND_ENTRIES entries in all. */
static void test_limits_are_kept(void)
{
    const uint32_t half = PVDC_MAX_BIND_ENTRIES / 2;
    g_autofree uint64_t *e = g_new(uint64_t, 2 * half);
    uint64_t big;
    Mem m;

    mem_start(&m);
    for (uint32_t i = 0; i < PVDC_MAX_BINDINGS; i++) {
        g_assert_cmphex(bind_one(&m, m.base + i * PAGE, PAGE, m.pages[i % 2],
                                 PAGE), ==, PVDC_BIND_OK);
    }
    g_assert_cmpuint(bindings(&m), ==, PVDC_MAX_BINDINGS);
    g_assert_cmphex(bind_one(&m, m.base + PVDC_MAX_BINDINGS * PAGE, PAGE,
                             m.pages[0], PAGE), ==, PVDC_BIND_ERR_NOSPC);
    for (uint32_t i = 0; i < PVDC_MAX_BINDINGS; i++) {
        g_assert_cmphex(pvdc_unbind_range(&m.t, m.base + i * PAGE, PAGE), ==,
                        PVDC_BIND_OK);
    }
    g_assert_cmpuint(bindings(&m), ==, 0);

    /* Half the entries in one binding: the same page 2^19 times. */
    big = guest_alloc(&m.alloc, (size_t)half * PVDC_BIND_ENTRY_SIZE);
    for (uint32_t i = 0; i < half; i++) {
        e[2 * i] = m.pages[0];
        e[2 * i + 1] = PAGE;
    }
    pvdc_write_bind_table(&m.t, big, e, half);
    g_assert_cmphex(pvdc_bind_range(&m.t, m.base, half * PAGE, big, half), ==,
                    PVDC_BIND_OK);
    /* More than the other half is refused before the table is read ... */
    g_assert_cmphex(pvdc_bind_range(&m.t, m.base + half * PAGE, PAGE, 0,
                                    half + 1), ==, PVDC_BIND_ERR_NOSPC);
    /* ... the other half is not (then its lengths do not add up). */
    g_assert_cmphex(pvdc_bind_range(&m.t, m.base + half * PAGE, PAGE, big,
                                    half), ==, PVDC_BIND_ERR_TABLE);
    g_assert_cmpuint(bindings(&m), ==, 1);
    mem_stop(&m);
}

/* A reset unmaps and forgets every binding and clears the registers. */
static void test_reset_drops_every_binding(void)
{
    Mem m;

    mem_start(&m);
    g_assert_cmphex(bind_scattered(&m, m.base), ==, PVDC_BIND_OK);
    g_assert_cmphex(bind_scattered(&m, m.base + BUF_PAGES * PAGE), ==,
                    PVDC_BIND_OK);
    g_assert_cmphex(pvdc_unbind_range(&m.t, m.base, PAGE), ==,
                    PVDC_BIND_ERR_NOT_BOUND);
    qtest_system_reset(m.t.qts);
    pvdc_test_detach(&m.t);
    pvdc_test_attach(&m.t, m.t.qts);
    g_assert_cmpuint(bindings(&m), ==, 0);
    g_assert_cmphex(pvdc_rd(&m.t, PVDC_REG_BIND_STATUS), ==, PVDC_BIND_OK);
    g_assert_cmphex(pvdc_rd(&m.t, PVDC_REG_BIND_ADDR), ==, 0);
    g_assert_cmphex(pvdc_rd(&m.t, PVDC_REG_BIND_ENTRIES), ==, 0);
    g_assert_cmphex(pvdc_unbind_range(&m.t, m.base, BUF_PAGES * PAGE), ==,
                    PVDC_BIND_ERR_NOT_BOUND);
    g_assert_cmphex(bind_scattered(&m, m.base + BUF_PAGES * PAGE), ==,
                    PVDC_BIND_OK);
    mem_stop(&m);
}

/*
 * The bindings come along, with the entries read at BIND: the table
 * rewritten since, with entries that would be refused, changes nothing.
 */
static void test_bindings_come_along(void)
{
    uint64_t garbage[2 * BUF_PAGES];
    PVDCTest dst;
    Mem m;

    mem_start(&m);
    g_assert_cmphex(bind_scattered(&m, m.base), ==, PVDC_BIND_OK);
    g_assert_cmphex(bind_one(&m, 0xfffff000, PAGE, RAM_SIZE - PAGE, PAGE),
                    ==, PVDC_BIND_OK);
    for (int i = 0; i < 2 * BUF_PAGES; i++) {
        garbage[i] = i % 2 ? 1 : m.t.mmio.addr;
    }
    pvdc_write_bind_table(&m.t, m.table, garbage, BUF_PAGES);
    pvdc_wr(&m.t, PVDC_REG_BIND_ENTRIES, 7);
    pvdc_wr(&m.t, PVDC_REG_DAMAGE_ADDR, 0x12345678);

    pvdc_test_migrate(&m.t, &dst, PROPS, EXTRA);
    g_assert_cmphex(pvdc_rd(&dst, PVDC_REG_DAMAGE_ADDR), ==, 0x12345678);
    g_assert_cmpuint(pvdc_statistic(dst.qts, "x-bindings"), ==, 2);
    g_assert_cmphex(pvdc_rd(&dst, PVDC_REG_BIND_ENTRIES), ==, 7);
    g_assert_cmphex(pvdc_rd(&dst, PVDC_REG_BIND_ADDR), ==, 0xfffff000);
    g_assert_cmphex(pvdc_unbind_range(&dst, m.base, BUF_PAGES * PAGE), ==,
                    PVDC_BIND_OK);
    g_assert_cmphex(pvdc_unbind_range(&dst, 0xfffff000, PAGE), ==,
                    PVDC_BIND_OK);
    g_assert_cmpuint(pvdc_statistic(dst.qts, "x-bindings"), ==, 0);
    pvdc_test_stop(&dst);
    mem_stop(&m);
}

/* ------------------------------------------------------------------------ */
/* Planes scanned out of bindings                                           */
/* ------------------------------------------------------------------------ */

/*
 * One scene, its bytes laid out alike in two buffers: A (the primary, a
 * scaled overlay, a cursor and the Y plane of an NV12 overlay) and B (the
 * NV12 overlay's Cb:Cr plane).  Each is bound from scattered pages, or
 * copied into VRAM at VRAM_A and VRAM_B.  The primary and the overlay
 * span several pages: they are composed from copies of their rows; the
 * cursor lies in one page: it is composed straight from it.
 */
#define A_PAGES             6
#define B_PAGES             2
#define PRI_REL             0
#define OV_REL              (4 * PAGE - 512)    /* across a page */
#define CUR_REL             (4 * PAGE + 1024)
#define NVY_REL             (5 * PAGE)
#define NVC_REL             (PAGE - 256)        /* across a page, in B */
#define VRAM_A              0x200000
#define VRAM_B              0x300000
#define BACKGROUND          0x336699
/* the pages of A and B among Mem.pages */
#define A_FIRST             0
#define B_FIRST             A_PAGES

typedef struct Scene {
    uint8_t a[A_PAGES * PAGE];
    uint8_t b[B_PAGES * PAGE];
} Scene;

/* The guest page holding byte @rel of the buffer of pages @first.. */
static uint64_t page_of(Mem *m, int first, int n, uint32_t rel)
{
    return m->pages[first + n - 1 - rel / PAGE] + rel % PAGE;
}

/* Bind the @n pages from @first, in reverse order, at @addr. */
static uint32_t bind_pages(Mem *m, uint32_t addr, int first, int n)
{
    uint64_t e[2 * BUF_PAGES];

    for (int i = 0; i < n; i++) {
        e[2 * i] = page_of(m, first, n, i * PAGE);
        e[2 * i + 1] = PAGE;
    }
    pvdc_write_bind_table(&m->t, m->table, e, n);
    return pvdc_bind_range(&m->t, addr, n * PAGE, m->table, n);
}

/* Write @buf into the pages from @first and into VRAM at @vram. */
static void scene_write(Mem *m, int first, int n, const uint8_t *buf,
                        uint32_t vram)
{
    for (int i = 0; i < n; i++) {
        qtest_memwrite(m->t.qts, page_of(m, first, n, i * PAGE),
                       buf + i * PAGE, PAGE);
    }
    qpci_memwrite(m->t.dev, m->t.vram, vram, buf, n * PAGE);
}

static void scene_init(Mem *m, Scene *sc)
{
    g_autoptr(GRand) rng = g_rand_new_with_seed(33);

    for (size_t i = 0; i < sizeof(sc->a); i++) {
        sc->a[i] = g_rand_int(rng);
    }
    for (size_t i = 0; i < sizeof(sc->b); i++) {
        sc->b[i] = g_rand_int(rng);
    }
    scene_write(m, A_FIRST, A_PAGES, sc->a, VRAM_A);
    scene_write(m, B_FIRST, B_PAGES, sc->b, VRAM_B);
    pvdc_wr(&m->t, PVDC_HEAD_CONTROL(0) + PVDC_HEAD_CRC_CTRL,
            PVDC_CRC_CTRL_ENABLE);
}

/*
 * Head 0 shows the scene with A at @a and B at @b, written back into VRAM
 * at @wb unless it is 0; the commit's result.
 */
static uint32_t show_scene_wb(PVDCTest *t, uint32_t a, uint32_t b,
                              uint32_t wb)
{
    unsigned int ov = pvdc_plane_of(t, 0, OVERLAY(0));
    unsigned int nv = pvdc_plane_of(t, 0, OVERLAY(1));
    unsigned int cur = pvdc_cursor_of(t, 0);

    pvdc_write_mode(t, 0, CLOCK_1MS);
    pvdc_wr_head(t, 0, PVDC_HS_BACKGROUND, BACKGROUND);
    if (wb) {
        pvdc_wr_head(t, 0, PVDC_HS_WB_FORMAT, PVDC_FMT_XRGB8888);
        pvdc_wr_head(t, 0, PVDC_HS_WB_OFFSET, wb);
        pvdc_wr_head(t, 0, PVDC_HS_WB_PITCH, MODE_PITCH);
        pvdc_wr_head(t, 0, PVDC_HS_CTRL,
                     PVDC_HS_CTRL_ENABLE | PVDC_HS_CTRL_WRITEBACK);
    }
    pvdc_write_plane(t, pvdc_plane_of(t, 0, PRIMARY), 0, a + PRI_REL, 0);

    pvdc_wr_plane(t, ov, PVDC_PS_HEAD, 0);
    pvdc_write_fb(t, ov, PVDC_FMT_ARGB8888, a + OV_REL, 64, 16, 16);
    /* cropped: its copy starts past the framebuffer's first byte */
    pvdc_wr_plane(t, ov, PVDC_PS_SRC_X, 0x28000);
    pvdc_wr_plane(t, ov, PVDC_PS_SRC_Y, FP16(3));
    pvdc_wr_plane(t, ov, PVDC_PS_SRC_W, FP16(12));
    pvdc_wr_plane(t, ov, PVDC_PS_SRC_H, FP16(10));
    pvdc_wr_plane(t, ov, PVDC_PS_DST_POS, PVDC_XY(8, 6));
    pvdc_wr_plane(t, ov, PVDC_PS_DST_SIZE, PVDC_XY(40, 30));
    pvdc_wr_plane(t, ov, PVDC_PS_ZPOS, 1);
    pvdc_wr_plane(t, ov, PVDC_PS_ALPHA, 0xffff);
    pvdc_wr_plane(t, ov, PVDC_PS_CTRL, PVDC_PS_CTRL_ENABLE |
                  PVDC_PS_CTRL_FILTER_BILINEAR |
                  PVDC_BLEND_COVERAGE << PVDC_PS_CTRL_BLEND_SHIFT);

    pvdc_wr_plane(t, nv, PVDC_PS_HEAD, 0);
    pvdc_write_fb(t, nv, PVDC_FMT_NV12, a + NVY_REL, 64, 32, 24);
    pvdc_wr_plane(t, nv, PVDC_PS_CHROMA_OFFSET, b + NVC_REL);
    pvdc_wr_plane(t, nv, PVDC_PS_CHROMA_PITCH, 64);
    pvdc_wr_plane(t, nv, PVDC_PS_DST_POS, PVDC_XY(20, 10));
    pvdc_wr_plane(t, nv, PVDC_PS_ZPOS, 2);
    pvdc_wr_plane(t, nv, PVDC_PS_ALPHA, 0xc000);
    pvdc_wr_plane(t, nv, PVDC_PS_CTRL, PVDC_PS_CTRL_ENABLE |
                  PVDC_COLOR_BT709 << PVDC_PS_CTRL_COLOR_ENCODING_SHIFT);

    pvdc_wr_plane(t, cur, PVDC_PS_HEAD, 0);
    pvdc_write_fb(t, cur, PVDC_FMT_ARGB8888, a + CUR_REL, 64, 16, 16);
    pvdc_wr_plane(t, cur, PVDC_PS_DST_POS, PVDC_XY(56, 40));
    pvdc_wr_plane(t, cur, PVDC_PS_ZPOS, 3);
    pvdc_wr_plane(t, cur, PVDC_PS_ALPHA, 0xffff);
    pvdc_wr_plane(t, cur, PVDC_PS_CTRL, PVDC_PS_CTRL_ENABLE |
                  PVDC_BLEND_PREMULTI << PVDC_PS_CTRL_BLEND_SHIFT);
    return pvdc_commit(t, 0);
}

static uint32_t show_scene(PVDCTest *t, uint32_t a, uint32_t b)
{
    return show_scene_wb(t, a, b, 0);
}

/* The guest wrote [@addr, @addr + @len) of the device address space. */
static void damage(PVDCTest *t, uint32_t addr, uint32_t len)
{
    pvdc_wr(t, PVDC_REG_DAMAGE_ADDR, addr);
    pvdc_wr(t, PVDC_REG_DAMAGE_LEN, len);
}

/* Console 0 as a screendump of the test mode. */
static uint32_t *dump(PVDCTest *t)
{
    int w, h;
    uint32_t *pixels = pvdc_screendump(t->qts, 0, &w, &h);

    g_assert_cmpint(w, ==, MODE_W);
    g_assert_cmpint(h, ==, MODE_H);
    return pixels;
}

static void assert_same_picture(const uint32_t *a, const uint32_t *b)
{
    for (int i = 0; i < MODE_W * MODE_H; i++) {
        if (a[i] != b[i]) {
            g_error("pixel (%d, %d): 0x%06x, expected 0x%06x", i % MODE_W,
                    i / MODE_W, b[i], a[i]);
        }
    }
}

/*
 * Fills @len bytes of guest RAM at @pages (and @fb, the test's copy) with
 * a pattern that changes every byte and, through @shift, every line.
 */
static void write_pattern(Mem *m, uint64_t pages, uint8_t *fb, uint32_t len,
                          unsigned int mul, unsigned int shift)
{
    for (uint32_t i = 0; i < len; i++) {
        fb[i] = i * mul + (i >> shift);
    }
    qtest_memwrite(m->t.qts, pages, fb, len);
}

/*
 * Head 0 shows @fb (@pitch bytes a line) straight from the guest RAM at
 * @pages: the picture is its bytes, and a pixel the guest then writes on
 * line @y is shown at once, without a composition.
 */
static void assert_shown_straight(Mem *m, const uint8_t *fb, uint32_t pitch,
                                  uint64_t pages, int y)
{
    uint32_t pixel = cpu_to_le32(0x00654321);
    g_autofree uint32_t *shown = NULL, *written = NULL;
    uint64_t before = pvdc_statistic(m->t.qts, "x-head0-compositions");

    shown = dump(&m->t);
    for (int j = 0; j < MODE_H; j++) {
        for (int x = 0; x < MODE_W; x++) {
            g_assert_cmphex(shown[j * MODE_W + x], ==,
                            ldl_le_p(fb + j * pitch + x * 4) & 0xffffff);
        }
    }
    qtest_memwrite(m->t.qts, pages + y * pitch + 9 * 4, &pixel, 4);
    written = dump(&m->t);
    g_assert_cmphex(written[y * MODE_W + 9], ==, 0x654321);
    g_assert_cmpuint(pvdc_statistic(m->t.qts, "x-head0-compositions"), ==,
                     before);
}

static uint32_t crc_now(PVDCTest *t)
{
    uint32_t frame;

    return pvdc_read_crc(t, 0, &frame);
}

/* The CRC of a frame of the background alone. */
static uint32_t background_crc(void)
{
    uint32_t pixels[MODE_W * MODE_H];

    for (int i = 0; i < ARRAY_SIZE(pixels); i++) {
        pixels[i] = BACKGROUND;
    }
    return pvdc_frame_crc(pixels, ARRAY_SIZE(pixels));
}

/* Bind A and B (apart) and show the scene from VRAM: its CRC and picture. */
static uint32_t scene_from_vram(Mem *m, Scene *sc, uint32_t **picture)
{
    uint32_t crc;

    scene_init(m, sc);
    g_assert_cmphex(bind_pages(m, m->base, A_FIRST, A_PAGES), ==,
                    PVDC_BIND_OK);
    g_assert_cmphex(bind_pages(m, m->base + BUF_PAGES * PAGE, B_FIRST,
                               B_PAGES), ==, PVDC_BIND_OK);
    g_assert_cmphex(show_scene(&m->t, VRAM_A, VRAM_B), ==,
                    PVDC_RESULT_APPLIED);
    crc = crc_now(&m->t);
    g_assert_cmphex(crc, !=, background_crc());
    *picture = dump(&m->t);
    return crc;
}

/*
 * The scene from VRAM (scene_from_vram()), then from the bindings of A
 * and B, with the same CRC.
 */
static uint32_t scene_from_bindings(Mem *m, Scene *sc, uint32_t **from_vram)
{
    uint32_t crc = scene_from_vram(m, sc, from_vram);

    g_assert_cmphex(show_scene(&m->t, m->base, m->base + BUF_PAGES * PAGE),
                    ==, PVDC_RESULT_APPLIED);
    g_assert_cmphex(crc_now(&m->t), ==, crc);
    return crc;
}

/*
 * A primary, a scaled overlay, a cursor and an NV12 overlay whose Cb:Cr
 * plane lies in another binding, each read from scattered guest pages,
 * show exactly what the same bytes show from VRAM: in the frame CRC and
 * on the console.  Guest RAM has no dirty log: the console shows a write
 * into a binding once DAMAGE_LEN reports it, and composes no more.
 */
static void test_planes_scan_out_of_bindings(const void *extra)
{
    g_autofree uint32_t *from_vram = NULL, *from_pages = NULL;
    g_autofree uint32_t *written = NULL;
    g_autofree Scene *sc = g_new0(Scene, 1);
    uint32_t crc, pixel = cpu_to_le32(0x00123456);
    Mem m;

    mem_start_with(&m, extra);
    crc = scene_from_bindings(&m, sc, &from_vram);
    from_pages = dump(&m.t);
    assert_same_picture(from_vram, from_pages);

    /*
     * The top-left pixel of the primary, under no other plane: the
     * console shows it once DAMAGE says so; the next frame's CRC at once.
     */
    qtest_memwrite(m.t.qts, page_of(&m, A_FIRST, A_PAGES, PRI_REL), &pixel,
                   sizeof(pixel));
    pvdc_step_to_next_vblank(&m.t, 0);
    g_assert_cmphex(crc_now(&m.t), !=, crc);
    written = dump(&m.t);
    assert_same_picture(from_pages, written);
    damage(&m.t, 0, m.t.vram_size);             /* VRAM: its own log */
    damage(&m.t, m.base + PRI_REL + 4, 4);      /* the next pixel */
    g_free(written);
    written = dump(&m.t);
    assert_same_picture(from_pages, written);
    damage(&m.t, m.base + PRI_REL, 4);
    g_free(written);
    written = dump(&m.t);
    g_assert_cmphex(written[0], ==, 0x123456);
    from_pages[0] = 0x123456;
    assert_same_picture(from_pages, written);

    /* Past the device address space: clipped, and nothing breaks. */
    damage(&m.t, 0xffffff00, UINT32_MAX);
    damage(&m.t, m.base, UINT32_MAX);
    g_free(written);
    written = dump(&m.t);
    assert_same_picture(from_pages, written);
    g_assert_cmphex(pvdc_rd(&m.t, PVDC_REG_DAMAGE_ADDR), ==, m.base);
    g_assert_cmphex(pvdc_rd(&m.t, PVDC_REG_DAMAGE_LEN), ==, 0);
    mem_stop(&m);
}

/*
 * A head showing one framebuffer unchanged is shown straight from its
 * memory: from a binding too, where its bytes are contiguous in the
 * host (one entry of contiguous guest pages), and it shows what the guest
 * writes there at once.  From scattered pages it is composed, and with
 * bus mastering off it is not shown.
 */
static void test_one_plane_shows_straight_from_a_binding(void)
{
    const uint32_t size = MODE_PITCH * MODE_H;
    g_autofree uint32_t *shown = NULL, *written = NULL, *blank = NULL;
    g_autofree uint8_t *fb = g_malloc(size);
    unsigned int pri;
    uint64_t pages, before;
    Mem m;

    mem_start(&m);
    pri = pvdc_plane_of(&m.t, 0, PRIMARY);
    g_assert_cmpuint(size % PAGE, ==, 0);
    pages = guest_alloc(&m.alloc, size);
    g_assert_cmpuint(pages % PAGE, ==, 0);
    write_pattern(&m, pages, fb, size, 7, 8);
    g_assert_cmphex(bind_one(&m, m.base, size, pages, size), ==,
                    PVDC_BIND_OK);
    pvdc_write_mode(&m.t, 0, CLOCK_1MS);
    pvdc_write_plane(&m.t, pri, 0, m.base, 0);
    g_assert_cmphex(pvdc_commit(&m.t, 0), ==, PVDC_RESULT_APPLIED);
    assert_shown_straight(&m, fb, MODE_PITCH, pages, 5);

    /* Without bus mastering: composed, without the plane. */
    before = pvdc_statistic(m.t.qts, "x-head0-compositions");
    set_bus_master(&m.t, false);
    blank = dump(&m.t);
    for (int i = 0; i < MODE_W * MODE_H; i++) {
        g_assert_cmphex(blank[i], ==, 0);
    }
    g_assert_cmpuint(pvdc_statistic(m.t.qts, "x-head0-compositions"), >,
                     before);
    set_bus_master(&m.t, true);

    /* The same bytes from scattered pages: composed, the same picture. */
    g_free(shown);
    shown = dump(&m.t);
    pvdc_write_plane(&m.t, pri, 0, 0, 0);
    g_assert_cmphex(pvdc_commit(&m.t, 0), ==, PVDC_RESULT_APPLIED);
    g_assert_cmphex(pvdc_unbind_range(&m.t, m.base, size), ==, PVDC_BIND_OK);
    for (int i = 0; i < size / PAGE; i++) {
        g_autofree uint8_t *page = g_malloc(PAGE);

        qtest_memread(m.t.qts, pages + i * PAGE, page, PAGE);
        qtest_memwrite(m.t.qts, m.pages[size / PAGE - 1 - i], page, PAGE);
    }
    g_assert_cmphex(bind_pages(&m, m.base, 0, size / PAGE), ==,
                    PVDC_BIND_OK);
    pvdc_write_plane(&m.t, pri, 0, m.base, 0);
    g_assert_cmphex(pvdc_commit(&m.t, 0), ==, PVDC_RESULT_APPLIED);
    before = pvdc_statistic(m.t.qts, "x-head0-compositions");
    g_free(written);
    written = dump(&m.t);
    assert_same_picture(shown, written);
    g_assert_cmpuint(pvdc_statistic(m.t.qts, "x-head0-compositions"), >,
                     before);
    mem_stop(&m);
}

/*
 * The bytes the device copies per frame to show a full-screen plane from
 * guest RAM: none when its pages are contiguous in the host (shown
 * straight from them), the framebuffer's bytes per composition when they
 * are scattered.
 */
static void test_bytes_copied_per_frame(void)
{
    const uint32_t size = MODE_PITCH * MODE_H;
    g_autofree uint32_t *a = NULL, *b = NULL;
    uint64_t pages, bytes, frames;
    unsigned int pri;
    Mem m;

    mem_start(&m);
    pri = pvdc_plane_of(&m.t, 0, PRIMARY);
    pages = guest_alloc(&m.alloc, size);
    g_assert_cmphex(bind_one(&m, m.base, size, pages, size), ==,
                    PVDC_BIND_OK);
    pvdc_write_mode(&m.t, 0, CLOCK_1MS);
    pvdc_write_plane(&m.t, pri, 0, m.base, 0);
    g_assert_cmphex(pvdc_commit(&m.t, 0), ==, PVDC_RESULT_APPLIED);
    bytes = pvdc_statistic(m.t.qts, "x-bounce-bytes");
    a = dump(&m.t);
    damage(&m.t, m.base, size);
    b = dump(&m.t);
    g_assert_cmpuint(pvdc_statistic(m.t.qts, "x-bounce-bytes"), ==, bytes);

    pvdc_write_plane(&m.t, pri, 0, 0, 0);
    g_assert_cmphex(pvdc_commit(&m.t, 0), ==, PVDC_RESULT_APPLIED);
    g_assert_cmphex(pvdc_unbind_range(&m.t, m.base, size), ==, PVDC_BIND_OK);
    g_assert_cmphex(bind_pages(&m, m.base, 0, size / PAGE), ==,
                    PVDC_BIND_OK);
    pvdc_write_plane(&m.t, pri, 0, m.base, 0);
    g_assert_cmphex(pvdc_commit(&m.t, 0), ==, PVDC_RESULT_APPLIED);
    g_free(a);
    a = dump(&m.t);
    bytes = pvdc_statistic(m.t.qts, "x-bounce-bytes");
    frames = pvdc_statistic(m.t.qts, "x-head0-compositions");
    damage(&m.t, m.base, size);
    g_free(b);
    b = dump(&m.t);
    frames = pvdc_statistic(m.t.qts, "x-head0-compositions") - frames;
    g_assert_cmpuint(frames, >=, 1);
    g_assert_cmpuint(pvdc_statistic(m.t.qts, "x-bounce-bytes") - bytes, ==,
                     frames * size);
    mem_stop(&m);
}

/*
 * With guest RAM in a memfd, a binding of scattered pages (listed in
 * reverse order) is one contiguous host view of them: a full-screen plane
 * is shown straight from it, no byte copied and nothing composed per
 * frame, and a scene of several planes in such bindings is composed with
 * no bounce copy, both exactly as from VRAM.  UNBIND unmaps the view: the
 * same device address bound to other pages shows those.
 */
static void test_memfd_scattered_pages_show_without_copies(void)
{
    const uint32_t size = MODE_PITCH * MODE_H;
    const int n = size / PAGE;
    g_autofree uint32_t *from_vram = NULL, *shown = NULL;
    g_autofree Scene *sc = g_new0(Scene, 1);
    g_autofree uint8_t *fb = g_malloc(size);
    uint64_t bytes, frames;
    unsigned int pri;
    uint32_t crc;
    Mem m;

    mem_start_with(&m, EXTRA_MEMFD);
    pri = pvdc_plane_of(&m.t, 0, PRIMARY);
    g_assert_cmpuint(size % PAGE, ==, 0);
    g_assert_cmpint(2 * n, <=, BUF_PAGES);
    for (uint32_t i = 0; i < size; i++) {
        fb[i] = i * 7 + (i >> 8);
    }
    scene_write(&m, 0, n, fb, 0);
    g_assert_cmphex(bind_pages(&m, m.base, 0, n), ==, PVDC_BIND_OK);
    pvdc_write_mode(&m.t, 0, CLOCK_1MS);
    pvdc_write_plane(&m.t, pri, 0, m.base, 0);
    g_assert_cmphex(pvdc_commit(&m.t, 0), ==, PVDC_RESULT_APPLIED);

    bytes = pvdc_statistic(m.t.qts, "x-bounce-bytes");
    frames = pvdc_statistic(m.t.qts, "x-head0-compositions");
    shown = dump(&m.t);
    for (int i = 0; i < MODE_W * MODE_H; i++) {
        g_assert_cmphex(shown[i], ==, ldl_le_p(fb + i * 4) & 0xffffff);
    }
    damage(&m.t, m.base, size);
    g_free(shown);
    shown = dump(&m.t);
    g_assert_cmpuint(pvdc_statistic(m.t.qts, "x-bounce-bytes"), ==, bytes);
    g_assert_cmpuint(pvdc_statistic(m.t.qts, "x-head0-compositions"), ==,
                     frames);

    /* Unbound and bound to other pages: those are shown. */
    pvdc_write_plane(&m.t, pri, 0, 0, 0);
    g_assert_cmphex(pvdc_commit(&m.t, 0), ==, PVDC_RESULT_APPLIED);
    g_assert_cmphex(pvdc_unbind_range(&m.t, m.base, size), ==, PVDC_BIND_OK);
    for (uint32_t i = 0; i < size; i++) {
        fb[i] = ~(i * 5 + (i >> 9));
    }
    scene_write(&m, n, n, fb, 0);
    g_assert_cmphex(bind_pages(&m, m.base, n, n), ==, PVDC_BIND_OK);
    pvdc_write_plane(&m.t, pri, 0, m.base, 0);
    g_assert_cmphex(pvdc_commit(&m.t, 0), ==, PVDC_RESULT_APPLIED);
    g_free(shown);
    shown = dump(&m.t);
    for (int i = 0; i < MODE_W * MODE_H; i++) {
        g_assert_cmphex(shown[i], ==, ldl_le_p(fb + i * 4) & 0xffffff);
    }
    g_assert_cmpuint(pvdc_statistic(m.t.qts, "x-bounce-bytes"), ==, bytes);
    pvdc_write_plane(&m.t, pri, 0, 0, 0);
    g_assert_cmphex(pvdc_commit(&m.t, 0), ==, PVDC_RESULT_APPLIED);
    g_assert_cmphex(pvdc_unbind_range(&m.t, m.base, size), ==, PVDC_BIND_OK);

    /* Several planes, across pages and bindings: composed, not copied. */
    crc = scene_from_vram(&m, sc, &from_vram);
    bytes = pvdc_statistic(m.t.qts, "x-bounce-bytes");
    frames = pvdc_statistic(m.t.qts, "x-head0-compositions");
    g_assert_cmphex(show_scene(&m.t, m.base, m.base + BUF_PAGES * PAGE), ==,
                    PVDC_RESULT_APPLIED);
    g_assert_cmphex(crc_now(&m.t), ==, crc);
    g_free(shown);
    shown = dump(&m.t);
    assert_same_picture(from_vram, shown);
    g_assert_cmpuint(pvdc_statistic(m.t.qts, "x-head0-compositions"), >,
                     frames);
    g_assert_cmpuint(pvdc_statistic(m.t.qts, "x-bounce-bytes"), ==, bytes);
    mem_stop(&m);
}

/* The host mappings of guest RAM's memfd in the QEMU of @t. */
static int memfd_mappings(PVDCTest *t)
{
    g_autofree char *path = g_strdup_printf("/proc/%d/maps",
                                            (int)qtest_pid(t->qts));
    g_autofree char *maps = NULL;
    g_auto(GStrv) lines = NULL;
    int n = 0;

    g_assert_true(g_file_get_contents(path, &maps, NULL, NULL));
    lines = g_strsplit(maps, "\n", -1);
    for (int i = 0; lines[i]; i++) {
        n += strstr(lines[i], "/memfd:") != NULL;
    }
    return n;
}

/*
 * A host view maps the binding's pages once, at BIND, and no longer than
 * the binding lives: UNBIND and a reset unmap it, with nothing left
 * behind (LeakSanitizer does not see mappings).
 */
static void test_memfd_host_views_are_unmapped(void)
{
    int before;
    Mem m;

    mem_start_with(&m, EXTRA_MEMFD);
    before = memfd_mappings(&m.t);
    g_assert_cmpint(before, >, 0);
    g_assert_cmphex(bind_scattered(&m, m.base), ==, PVDC_BIND_OK);
    g_assert_cmpint(memfd_mappings(&m.t), >, before);
    g_assert_cmphex(pvdc_unbind_range(&m.t, m.base, BUF_PAGES * PAGE), ==,
                    PVDC_BIND_OK);
    g_assert_cmpint(memfd_mappings(&m.t), ==, before);

    g_assert_cmphex(bind_scattered(&m, m.base), ==, PVDC_BIND_OK);
    g_assert_cmphex(bind_pages(&m, m.base + BUF_PAGES * PAGE, 0, 3), ==,
                    PVDC_BIND_OK);
    g_assert_cmpint(memfd_mappings(&m.t), >, before);
    qtest_system_reset(m.t.qts);
    pvdc_test_detach(&m.t);
    pvdc_test_attach(&m.t, m.t.qts);
    g_assert_cmpuint(bindings(&m), ==, 0);
    g_assert_cmpint(memfd_mappings(&m.t), ==, before);
    mem_stop(&m);
}

/* More runs than the device maps for host views (PVDC_MAX_VIEW_MAPPINGS) */
#define MANY_RUNS           32768

/*
 * Each run of a host view is a host mapping, of which a process may have
 * only so many: a binding of more runs than the device maps for views
 * (two pages alternating, each entry a run of its own) gets none, and is
 * shown through copies, the host refusing no mapping; once it is unbound
 * a binding of scattered pages has its view again.
 */
static void test_memfd_host_views_are_bounded(void)
{
    const uint32_t size = MODE_PITCH * MODE_H;
    g_autofree uint64_t *e = g_new(uint64_t, 2 * MANY_RUNS);
    g_autofree uint32_t *shown = NULL;
    uint64_t table, bytes;
    unsigned int pri;
    Mem m;

    mem_start_with(&m, EXTRA_MEMFD);
    pri = pvdc_plane_of(&m.t, 0, PRIMARY);
    table = guest_alloc(&m.alloc, MANY_RUNS * PVDC_BIND_ENTRY_SIZE);
    for (int i = 0; i < MANY_RUNS; i++) {
        e[2 * i] = m.pages[i % 2 ? 0 : 2];
        e[2 * i + 1] = PAGE;
    }
    pvdc_write_bind_table(&m.t, table, e, MANY_RUNS);
    g_assert_cmphex(pvdc_bind_range(&m.t, m.base, MANY_RUNS * PAGE, table,
                                    MANY_RUNS), ==, PVDC_BIND_OK);
    pvdc_write_mode(&m.t, 0, CLOCK_1MS);
    pvdc_write_plane(&m.t, pri, 0, m.base, 0);
    g_assert_cmphex(pvdc_commit(&m.t, 0), ==, PVDC_RESULT_APPLIED);
    bytes = pvdc_statistic(m.t.qts, "x-bounce-bytes");
    damage(&m.t, m.base, size);
    shown = dump(&m.t);
    g_assert_cmpuint(pvdc_statistic(m.t.qts, "x-bounce-bytes") - bytes, >=,
                     size);

    pvdc_write_plane(&m.t, pri, 0, 0, 0);
    g_assert_cmphex(pvdc_commit(&m.t, 0), ==, PVDC_RESULT_APPLIED);
    g_assert_cmphex(pvdc_unbind_range(&m.t, m.base, MANY_RUNS * PAGE), ==,
                    PVDC_BIND_OK);
    g_assert_cmphex(bind_pages(&m, m.base, 0, size / PAGE), ==,
                    PVDC_BIND_OK);
    pvdc_write_plane(&m.t, pri, 0, m.base, 0);
    g_assert_cmphex(pvdc_commit(&m.t, 0), ==, PVDC_RESULT_APPLIED);
    bytes = pvdc_statistic(m.t.qts, "x-bounce-bytes");
    damage(&m.t, m.base, size);
    g_free(shown);
    shown = dump(&m.t);
    g_assert_cmpuint(pvdc_statistic(m.t.qts, "x-bounce-bytes"), ==, bytes);
    mem_stop(&m);
}

#define MERGED_PITCH        1024
#define MERGED_LEN          (MERGED_PITCH * MODE_H)

/*
 * Pages contiguous in guest RAM (as hugepages give them) listed one
 * entry each: BIND merges their mappings, so that a head showing one
 * framebuffer across all of them is shown straight from guest RAM, as
 * from one entry, and shows what the guest writes there at once,
 * without composing.
 */
static void test_contiguous_entries_are_merged(void)
{
    const int n = MERGED_LEN / PAGE;
    g_autofree uint64_t *e = g_new(uint64_t, 2 * n);
    g_autofree uint8_t *fb = g_malloc(MERGED_LEN);
    unsigned int pri;
    uint64_t pages;
    Mem m;

    mem_start(&m);
    pri = pvdc_plane_of(&m.t, 0, PRIMARY);
    g_assert_cmpuint(MERGED_LEN % PAGE, ==, 0);
    g_assert_cmpint(n, <=, TABLE_ROOM);
    pages = guest_alloc(&m.alloc, MERGED_LEN);
    g_assert_cmpuint(pages % PAGE, ==, 0);
    write_pattern(&m, pages, fb, MERGED_LEN, 13, 9);
    for (int i = 0; i < n; i++) {
        e[2 * i] = pages + i * PAGE;
        e[2 * i + 1] = PAGE;
    }
    pvdc_write_bind_table(&m.t, m.table, e, n);
    g_assert_cmphex(pvdc_bind_range(&m.t, m.base, MERGED_LEN, m.table, n), ==,
                    PVDC_BIND_OK);
    pvdc_write_mode(&m.t, 0, CLOCK_1MS);
    pvdc_write_plane(&m.t, pri, 0, m.base, 0);
    pvdc_wr_plane(&m.t, pri, PVDC_PS_FB_PITCH, MERGED_PITCH);
    g_assert_cmphex(pvdc_commit(&m.t, 0), ==, PVDC_RESULT_APPLIED);
    /* line 40 lies in the 11th page: no DAMAGE_LEN, no composition */
    assert_shown_straight(&m, fb, MERGED_PITCH, pages, 40);
    mem_stop(&m);
}

/*
 * A framebuffer or Cb:Cr plane lies wholly in VRAM or wholly in one
 * binding: across the end of VRAM, of a binding, or from one binding
 * into the next, which touches it, it is refused.
 */
static void test_ranges_across_bindings_are_refused(void)
{
    unsigned int pri, nv;
    uint32_t a, b;
    Mem m;

    mem_start(&m);
    pri = pvdc_plane_of(&m.t, 0, PRIMARY);
    nv = pvdc_plane_of(&m.t, 0, OVERLAY(1));
    a = m.base;
    b = m.base + A_PAGES * PAGE;
    g_assert_cmphex(bind_pages(&m, a, A_FIRST, A_PAGES), ==, PVDC_BIND_OK);
    g_assert_cmphex(bind_pages(&m, b, B_FIRST, B_PAGES), ==, PVDC_BIND_OK);

    /* The primary is 3 pages: it ends exactly at the end of A. */
    pvdc_write_mode(&m.t, 0, CLOCK_1MS);
    pvdc_write_plane(&m.t, pri, 0, a + 3 * PAGE, 0);
    g_assert_cmphex(pvdc_commit(&m.t, 0), ==, PVDC_RESULT_APPLIED);
    const uint32_t refused[] = {
        a - PAGE,                       /* VRAM into A */
        a + 3 * PAGE + 64,              /* A into B */
        b,                              /* B and past it */
    };
    for (int i = 0; i < ARRAY_SIZE(refused); i++) {
        g_test_message("primary at 0x%x", refused[i]);
        pvdc_write_plane(&m.t, pri, 0, refused[i], 0);
        g_assert_cmphex(pvdc_commit(&m.t, 0), ==,
                        pvdc_result_of(PVDC_ERR_FB_BOUNDS, pri));
    }
    pvdc_write_plane(&m.t, pri, 0, a + 3 * PAGE, 0);

    /* The Y plane in A, its Cb:Cr plane across A's end into B. */
    pvdc_wr_plane(&m.t, nv, PVDC_PS_HEAD, 0);
    pvdc_write_fb(&m.t, nv, PVDC_FMT_NV12, a + NVY_REL, 64, 32, 24);
    pvdc_wr_plane(&m.t, nv, PVDC_PS_CHROMA_OFFSET, b - 256);
    pvdc_wr_plane(&m.t, nv, PVDC_PS_CHROMA_PITCH, 64);
    pvdc_wr_plane(&m.t, nv, PVDC_PS_ZPOS, 1);
    pvdc_wr_plane(&m.t, nv, PVDC_PS_ALPHA, 0xffff);
    pvdc_wr_plane(&m.t, nv, PVDC_PS_CTRL, PVDC_PS_CTRL_ENABLE);
    g_assert_cmphex(pvdc_commit(&m.t, 0), ==,
                    pvdc_result_of(PVDC_ERR_CHROMA, nv));
    pvdc_wr_plane(&m.t, nv, PVDC_PS_CHROMA_OFFSET, b + NVC_REL);
    g_assert_cmphex(pvdc_commit(&m.t, 0), ==, PVDC_RESULT_APPLIED);
    mem_stop(&m);
}

/*
 * What an armed or active state reads never changes under it: BIND and
 * UNBIND of a range it uses are refused, and succeed once it moved away.
 */
static void test_bindings_in_use_are_busy(void)
{
    uint32_t a, c, size = A_PAGES * PAGE;
    unsigned int pri;
    Mem m;

    mem_start(&m);
    pri = pvdc_plane_of(&m.t, 0, PRIMARY);
    a = m.base;
    c = m.base + BUF_PAGES * PAGE;
    g_assert_cmphex(bind_pages(&m, a, A_FIRST, A_PAGES), ==, PVDC_BIND_OK);
    pvdc_enable_head(&m.t, 0, CLOCK_1MS);

    /* Armed, between the doorbell and the latch point. */
    pvdc_write_plane(&m.t, pri, 0, a, 0);
    pvdc_doorbell(&m.t, 0);
    g_assert_cmpuint(pvdc_head_ctl(&m.t, 0, PVDC_HEAD_DOORBELL), !=, 0);
    g_assert_cmphex(pvdc_unbind_range(&m.t, a, size), ==, PVDC_BIND_ERR_BUSY);
    /* A range it does not read binds and unbinds. */
    g_assert_cmphex(bind_pages(&m, c, B_FIRST, B_PAGES), ==, PVDC_BIND_OK);
    g_assert_cmphex(pvdc_unbind_range(&m.t, c, B_PAGES * PAGE), ==,
                    PVDC_BIND_OK);
    g_assert_cmphex(pvdc_wait_outcome(&m.t, 0, NANOSECONDS_PER_SECOND), ==,
                    PVDC_RESULT_APPLIED);
    /* Active. */
    g_assert_cmphex(pvdc_unbind_range(&m.t, a, size), ==, PVDC_BIND_ERR_BUSY);

    /* An armed commit may name a range not bound yet: binding it waits. */
    pvdc_write_plane(&m.t, pri, 0, c, 0);
    pvdc_doorbell(&m.t, 0);
    g_assert_cmphex(bind_pages(&m, c + PAGE, B_FIRST, B_PAGES), ==,
                    PVDC_BIND_ERR_BUSY);
    g_assert_cmpuint(bindings(&m), ==, 1);
    g_assert_cmphex(pvdc_wait_outcome(&m.t, 0, NANOSECONDS_PER_SECOND), ==,
                    pvdc_result_of(PVDC_ERR_FB_BOUNDS, pri));
    g_assert_cmphex(pvdc_unbind_range(&m.t, a, size), ==, PVDC_BIND_ERR_BUSY);

    /* The state moved back to VRAM: both succeed. */
    pvdc_write_plane(&m.t, pri, 0, 0, 0);
    g_assert_cmphex(pvdc_commit(&m.t, 0), ==, PVDC_RESULT_APPLIED);
    g_assert_cmphex(pvdc_unbind_range(&m.t, a, size), ==, PVDC_BIND_OK);
    g_assert_cmphex(bind_pages(&m, c + PAGE, B_FIRST, B_PAGES), ==,
                    PVDC_BIND_OK);
    mem_stop(&m);
}

/*
 * Without bus mastering the device reads no guest page: planes in
 * bindings are not shown, as if disabled, and are again once it is back.
 */
static void test_bus_mastering_off_blanks_bound_planes(void)
{
    g_autofree uint32_t *from_vram = NULL, *blank = NULL, *back = NULL;
    g_autofree Scene *sc = g_new0(Scene, 1);
    uint32_t crc;
    Mem m;

    mem_start(&m);
    crc = scene_from_bindings(&m, sc, &from_vram);
    set_bus_master(&m.t, false);
    pvdc_step_to_next_vblank(&m.t, 0);
    g_assert_cmphex(crc_now(&m.t), ==, background_crc());
    blank = dump(&m.t);
    for (int i = 0; i < MODE_W * MODE_H; i++) {
        g_assert_cmphex(blank[i], ==, BACKGROUND);
    }
    set_bus_master(&m.t, true);
    pvdc_step_to_next_vblank(&m.t, 0);
    g_assert_cmphex(crc_now(&m.t), ==, crc);
    back = dump(&m.t);
    assert_same_picture(from_vram, back);
    mem_stop(&m);
}

/* Writeback composes planes in bindings as it does planes in VRAM. */
static void test_writeback_of_planes_in_bindings(void)
{
    const uint32_t wb_vram = 0x400000, wb_pages = 0x500000;
    const size_t len = MODE_PITCH * MODE_H;
    g_autofree uint8_t *from_vram = g_malloc(len);
    g_autofree uint8_t *from_pages = g_malloc(len);
    g_autofree Scene *sc = g_new0(Scene, 1);
    Mem m;

    mem_start(&m);
    scene_init(&m, sc);
    g_assert_cmphex(bind_pages(&m, m.base, A_FIRST, A_PAGES), ==,
                    PVDC_BIND_OK);
    g_assert_cmphex(bind_pages(&m, m.base + BUF_PAGES * PAGE, B_FIRST,
                               B_PAGES), ==, PVDC_BIND_OK);
    g_assert_cmphex(show_scene_wb(&m.t, VRAM_A, VRAM_B, wb_vram), ==,
                    PVDC_RESULT_APPLIED);
    g_assert_cmphex(show_scene_wb(&m.t, m.base, m.base + BUF_PAGES * PAGE,
                                  wb_pages), ==, PVDC_RESULT_APPLIED);
    qpci_memread(m.t.dev, m.t.vram, wb_vram, from_vram, len);
    qpci_memread(m.t.dev, m.t.vram, wb_pages, from_pages, len);
    for (size_t i = 0; i < len; i += 4) {
        /* written (VRAM starts zeroed): the X byte is 0xff */
        g_assert_cmphex(from_vram[i + 3], ==, 0xff);
        g_assert_cmphex(ldl_le_p(from_pages + i), ==,
                        ldl_le_p(from_vram + i));
    }
    mem_stop(&m);
}

/*
 * @n pages more, each allocated alone, into @pages; bound in reverse
 * order at @addr, so that none is next to the one before it.
 */
static uint32_t bind_new_pages(Mem *m, uint32_t addr, int n, uint64_t *pages)
{
    uint64_t e[2 * BUF_PAGES];

    g_assert_cmpint(n, <=, BUF_PAGES);
    for (int i = 0; i < n; i++) {
        pages[i] = guest_alloc(&m->alloc, PAGE);
        g_assert_cmpuint(pages[i] % PAGE, ==, 0);
    }
    for (int i = 0; i < n; i++) {
        e[2 * i] = pages[n - 1 - i];
        e[2 * i + 1] = PAGE;
    }
    pvdc_write_bind_table(&m->t, m->table, e, n);
    return pvdc_bind_range(&m->t, addr, n * PAGE, m->table, n);
}

/*
 * Reads, or with @write writes, bytes [@rel, @rel + @len) of the binding
 * of @pages (bind_new_pages()).
 */
static void bound_access(Mem *m, const uint64_t *pages, int n, uint32_t rel,
                         uint8_t *buf, uint32_t len, bool write)
{
    /* Each pass goes up to the end of a page: bounded by @len. */
    while (len) {
        uint32_t k = MIN(len, PAGE - rel % PAGE);
        uint64_t addr = pages[n - 1 - rel / PAGE] + rel % PAGE;

        if (write) {
            qtest_memwrite(m->t.qts, addr, buf, k);
        } else {
            qtest_memread(m->t.qts, addr, buf, k);
        }
        rel += k;
        buf += k;
        len -= k;
    }
}

static void bound_read(Mem *m, const uint64_t *pages, int n, uint32_t rel,
                       uint8_t *buf, uint32_t len)
{
    bound_access(m, pages, n, rel, buf, len, false);
}

static void bound_write(Mem *m, const uint64_t *pages, int n, uint32_t rel,
                        const uint8_t *buf, uint32_t len)
{
    /* Only read from when writing. */
    bound_access(m, pages, n, rel, (uint8_t *)buf, len, true);
}

#define WB_LEN              (MODE_PITCH * MODE_H)
#define WB_PAGES            (WB_LEN / PAGE)
#define WB_VRAM             0x400000

/*
 * A writeback target may lie in a binding: the frame is written through
 * its scattered pages, byte for byte what it is in VRAM.  Across the end
 * of the binding it is refused; while it is armed or active its binding
 * is busy; with bus mastering off it is not written, and the commit
 * applies all the same.
 */
static void test_writeback_into_a_binding(const void *extra)
{
    g_autofree uint8_t *from_vram = g_malloc(WB_LEN);
    g_autofree uint8_t *from_pages = g_malloc(WB_LEN);
    g_autofree uint8_t *zero = g_malloc0(WB_LEN);
    g_autofree Scene *sc = g_new0(Scene, 1);
    uint64_t pages[WB_PAGES];
    uint32_t w;
    Mem m;

    mem_start_with(&m, extra);
    w = m.base;
    scene_init(&m, sc);
    g_assert_cmpuint(WB_LEN % PAGE, ==, 0);
    g_assert_cmphex(bind_new_pages(&m, w, WB_PAGES, pages), ==,
                    PVDC_BIND_OK);
    g_assert_cmphex(show_scene_wb(&m.t, VRAM_A, VRAM_B, WB_VRAM), ==,
                    PVDC_RESULT_APPLIED);
    qpci_memread(m.t.dev, m.t.vram, WB_VRAM, from_vram, WB_LEN);
    g_assert_cmphex(show_scene_wb(&m.t, VRAM_A, VRAM_B, w), ==,
                    PVDC_RESULT_APPLIED);
    bound_read(&m, pages, WB_PAGES, 0, from_pages, WB_LEN);
    g_assert(memcmp(from_vram, zero, WB_LEN) != 0);
    g_assert(memcmp(from_pages, from_vram, WB_LEN) == 0);

    /* Active, then armed: the binding it writes is busy. */
    g_assert_cmphex(pvdc_unbind_range(&m.t, w, WB_LEN), ==, PVDC_BIND_ERR_BUSY);
    pvdc_wr_head(&m.t, 0, PVDC_HS_WB_OFFSET, WB_VRAM);
    g_assert_cmphex(pvdc_commit(&m.t, 0), ==, PVDC_RESULT_APPLIED);
    pvdc_wr_head(&m.t, 0, PVDC_HS_WB_OFFSET, w);
    pvdc_doorbell(&m.t, 0);
    g_assert_cmpuint(pvdc_head_ctl(&m.t, 0, PVDC_HEAD_DOORBELL), !=, 0);
    g_assert_cmphex(pvdc_unbind_range(&m.t, w, WB_LEN), ==, PVDC_BIND_ERR_BUSY);
    g_assert_cmphex(pvdc_wait_outcome(&m.t, 0, NANOSECONDS_PER_SECOND), ==,
                    PVDC_RESULT_APPLIED);

    /* Past the end of the binding, into the next: refused. */
    g_assert_cmphex(bind_pages(&m, w + WB_LEN, A_FIRST, A_PAGES), ==,
                    PVDC_BIND_OK);
    pvdc_wr_head(&m.t, 0, PVDC_HS_WB_OFFSET, w + PAGE);
    g_assert_cmphex(pvdc_commit(&m.t, 0), ==,
                    pvdc_head_result(PVDC_ERR_WRITEBACK));

    /* Bus mastering off: nothing written, the commit applies. */
    bound_write(&m, pages, WB_PAGES, 0, zero, WB_LEN);
    set_bus_master(&m.t, false);
    pvdc_wr_head(&m.t, 0, PVDC_HS_WB_OFFSET, w);
    g_assert_cmphex(pvdc_commit(&m.t, 0), ==, PVDC_RESULT_APPLIED);
    bound_read(&m, pages, WB_PAGES, 0, from_pages, WB_LEN);
    g_assert(memcmp(from_pages, zero, WB_LEN) == 0);
    set_bus_master(&m.t, true);
    g_assert_cmphex(pvdc_commit(&m.t, 0), ==, PVDC_RESULT_APPLIED);
    bound_read(&m, pages, WB_PAGES, 0, from_pages, WB_LEN);
    g_assert(memcmp(from_pages, from_vram, WB_LEN) == 0);

    /* Moved back to VRAM: the binding is free. */
    pvdc_wr_head(&m.t, 0, PVDC_HS_CTRL, PVDC_HS_CTRL_ENABLE);
    g_assert_cmphex(pvdc_commit(&m.t, 0), ==, PVDC_RESULT_APPLIED);
    g_assert_cmphex(pvdc_unbind_range(&m.t, w, WB_LEN), ==, PVDC_BIND_OK);
    mem_stop(&m);
}

/*
 * A writeback into the binding a plane shows is on the console at once,
 * as a writeback into VRAM is: it needs no DAMAGE_LEN from the guest.
 */
static void test_writeback_into_a_shown_binding_shows(void)
{
    g_autofree uint32_t *before = NULL, *after = NULL;
    uint64_t pages[WB_PAGES];
    uint32_t w;
    int width, height;
    Mem m;

    mem_start(&m);
    w = m.base;
    g_assert_cmphex(bind_new_pages(&m, w, WB_PAGES, pages), ==,
                    PVDC_BIND_OK);
    /* head 1 shows the target; head 0 shows its background */
    pvdc_write_mode(&m.t, 1, CLOCK_1MS);
    pvdc_write_plane(&m.t, pvdc_plane_of(&m.t, 1, PRIMARY), 1, w, 0);
    g_assert_cmphex(pvdc_commit(&m.t, 1), ==, PVDC_RESULT_APPLIED);
    before = pvdc_screendump(m.t.qts, 1, &width, &height);
    g_assert_cmphex(before[0], ==, 0);

    pvdc_write_mode(&m.t, 0, CLOCK_1MS);
    pvdc_wr_plane(&m.t, pvdc_plane_of(&m.t, 0, PRIMARY), PVDC_PS_CTRL, 0);
    pvdc_wr_head(&m.t, 0, PVDC_HS_BACKGROUND, BACKGROUND);
    pvdc_wr_head(&m.t, 0, PVDC_HS_WB_FORMAT, PVDC_FMT_XRGB8888);
    pvdc_wr_head(&m.t, 0, PVDC_HS_WB_OFFSET, w);
    pvdc_wr_head(&m.t, 0, PVDC_HS_WB_PITCH, MODE_PITCH);
    pvdc_wr_head(&m.t, 0, PVDC_HS_CTRL,
                 PVDC_HS_CTRL_ENABLE | PVDC_HS_CTRL_WRITEBACK);
    g_assert_cmphex(pvdc_commit(&m.t, 0), ==, PVDC_RESULT_APPLIED);
    after = pvdc_screendump(m.t.qts, 1, &width, &height);
    for (int i = 0; i < MODE_W * MODE_H; i++) {
        g_assert_cmphex(after[i], ==, BACKGROUND);
    }
    mem_stop(&m);
}

#define LUT_ENTRIES         256
#define LUT_LEN             (LUT_ENTRIES * PVDC_LUT_ENTRY_SIZE)
#define LUT_REL             (PAGE - LUT_LEN / 2)    /* across a page */
#define CTM_REL             (2 * PAGE - PVDC_CTM_SIZE)  /* ends the binding */
#define VRAM_TABLES         0x600000
#define TABLE_PAGES         2

/* The head's gamma LUT and matrix at @lut and @ctm, both enabled. */
static uint32_t show_colour(PVDCTest *t, uint32_t lut, uint32_t ctm)
{
    pvdc_wr_head(t, 0, PVDC_HS_GAMMA_LUT, lut);
    pvdc_wr_head(t, 0, PVDC_HS_CTM, ctm);
    pvdc_wr_head(t, 0, PVDC_HS_LUT_SIZES, PVDC_XY(LUT_ENTRIES, LUT_ENTRIES));
    pvdc_wr_head(t, 0, PVDC_HS_CTRL, PVDC_HS_CTRL_ENABLE | PVDC_HS_CTRL_CTM |
                 PVDC_HS_CTRL_GAMMA);
    return pvdc_commit(t, 0);
}

/*
 * An inverting gamma LUT, and a matrix of 0 but for 1.0 at the three
 * coefficients @ones (S31.32, row by row).
 */
static void make_colour_tables(uint8_t *lut, uint8_t *ctm, const int ones[3])
{
    for (int i = 0; i < LUT_ENTRIES; i++) {
        uint16_t v = (LUT_ENTRIES - 1 - i) * 0x101;

        stq_le_p(lut + i * PVDC_LUT_ENTRY_SIZE,
                 v | (uint64_t)v << 16 | (uint64_t)v << 32);
    }
    memset(ctm, 0, PVDC_CTM_SIZE);
    for (int i = 0; i < 3; i++) {
        stq_le_p(ctm + ones[i] * 8, 1ULL << 32);
    }
}

/* TABLE_PAGES new pages bound after the scene's buffers: where they are. */
static uint32_t bind_table_pages(Mem *m, uint64_t *pages)
{
    uint32_t c = m->base + 2 * BUF_PAGES * PAGE;

    g_assert_cmphex(bind_new_pages(m, c, TABLE_PAGES, pages), ==,
                    PVDC_BIND_OK);
    return c;
}

/* @lut and @ctm at LUT_REL and CTM_REL of the binding of @pages. */
static void bound_write_tables(Mem *m, const uint64_t *pages,
                               const uint8_t *lut, const uint8_t *ctm)
{
    bound_write(m, pages, TABLE_PAGES, LUT_REL, lut, LUT_LEN);
    bound_write(m, pages, TABLE_PAGES, CTM_REL, ctm, PVDC_CTM_SIZE);
}

/*
 * Colour tables may lie in a binding, across its pages: the head shows
 * what the same tables show from VRAM.  They are copied at the doorbell,
 * so writing the pages afterwards changes nothing; across the end of the
 * binding they are refused; the binding is busy while a state uses them;
 * with bus mastering off at the doorbell they are not read, and their
 * stages are bypassed for that commit.
 */
static void test_colour_tables_in_a_binding(void)
{
    g_autofree uint32_t *plain = NULL, *from_vram = NULL, *shown = NULL;
    g_autofree Scene *sc = g_new0(Scene, 1);
    /* a matrix that swaps red and blue */
    static const int swap_red_blue[3] = { 2, 4, 6 };
    uint8_t lut[LUT_LEN], ctm[PVDC_CTM_SIZE], zero[LUT_LEN] = {};
    uint32_t crc_plain, crc, c;
    uint64_t pages[TABLE_PAGES];
    Mem m;

    make_colour_tables(lut, ctm, swap_red_blue);
    mem_start(&m);
    crc_plain = scene_from_vram(&m, sc, &plain);
    c = bind_table_pages(&m, pages);
    qpci_memwrite(m.t.dev, m.t.vram, VRAM_TABLES, lut, LUT_LEN);
    qpci_memwrite(m.t.dev, m.t.vram, VRAM_TABLES + PAGE, ctm, sizeof(ctm));
    g_assert_cmphex(show_colour(&m.t, VRAM_TABLES, VRAM_TABLES + PAGE), ==,
                    PVDC_RESULT_APPLIED);
    crc = crc_now(&m.t);
    g_assert_cmphex(crc, !=, crc_plain);
    from_vram = dump(&m.t);

    bound_write_tables(&m, pages, lut, ctm);
    g_assert_cmphex(show_colour(&m.t, c + LUT_REL, c + CTM_REL), ==,
                    PVDC_RESULT_APPLIED);
    pvdc_step_to_next_vblank(&m.t, 0);
    g_assert_cmphex(crc_now(&m.t), ==, crc);
    shown = dump(&m.t);
    assert_same_picture(from_vram, shown);

    /*
     * Copied at the doorbell: the pages may change between the doorbell
     * and the latch, and after it; the frames do not.
     */
    pvdc_doorbell(&m.t, 0);
    g_assert_cmpuint(pvdc_head_ctl(&m.t, 0, PVDC_HEAD_DOORBELL), !=, 0);
    bound_write_tables(&m, pages, zero, zero);
    g_assert_cmphex(pvdc_wait_outcome(&m.t, 0, NANOSECONDS_PER_SECOND), ==,
                    PVDC_RESULT_APPLIED);
    g_assert_cmphex(crc_now(&m.t), ==, crc);
    damage(&m.t, c, TABLE_PAGES * PAGE);
    pvdc_step_to_next_vblank(&m.t, 0);
    g_assert_cmphex(crc_now(&m.t), ==, crc);

    /* Active: busy.  Armed on a range not bound yet: binding it waits. */
    g_assert_cmphex(pvdc_unbind_range(&m.t, c, TABLE_PAGES * PAGE), ==,
                    PVDC_BIND_ERR_BUSY);
    pvdc_wr_head(&m.t, 0, PVDC_HS_GAMMA_LUT, c + TABLE_PAGES * PAGE);
    pvdc_doorbell(&m.t, 0);
    g_assert_cmphex(bind_pages(&m, c + TABLE_PAGES * PAGE, A_FIRST, 1), ==,
                    PVDC_BIND_ERR_BUSY);
    g_assert_cmphex(pvdc_wait_outcome(&m.t, 0, NANOSECONDS_PER_SECOND), ==,
                    pvdc_head_result(PVDC_ERR_COLOR));

    /* Across the end of the binding, into the next: refused. */
    g_assert_cmphex(bind_pages(&m, c + TABLE_PAGES * PAGE, A_FIRST, 1), ==,
                    PVDC_BIND_OK);
    g_assert_cmphex(show_colour(&m.t, c + 2 * PAGE - LUT_LEN / 2,
                                c + CTM_REL), ==,
                    pvdc_head_result(PVDC_ERR_COLOR));
    g_assert_cmphex(show_colour(&m.t, c + LUT_REL, c + CTM_REL + 8), ==,
                    pvdc_head_result(PVDC_ERR_COLOR));

    /* Bus mastering off at the doorbell: both stages bypassed. */
    bound_write_tables(&m, pages, lut, ctm);
    set_bus_master(&m.t, false);
    g_assert_cmphex(show_colour(&m.t, c + LUT_REL, c + CTM_REL), ==,
                    PVDC_RESULT_APPLIED);
    g_assert_cmphex(crc_now(&m.t), ==, crc_plain);
    set_bus_master(&m.t, true);
    pvdc_step_to_next_vblank(&m.t, 0);
    g_assert_cmphex(crc_now(&m.t), ==, crc_plain);
    g_assert_cmphex(show_colour(&m.t, c + LUT_REL, c + CTM_REL), ==,
                    PVDC_RESULT_APPLIED);
    g_assert_cmphex(crc_now(&m.t), ==, crc);

    /* Back in VRAM: the binding is free. */
    g_assert_cmphex(show_colour(&m.t, VRAM_TABLES, VRAM_TABLES + PAGE), ==,
                    PVDC_RESULT_APPLIED);
    g_assert_cmphex(pvdc_unbind_range(&m.t, c, TABLE_PAGES * PAGE), ==,
                    PVDC_BIND_OK);
    mem_stop(&m);
}

/*
 * A commit armed with bus mastering off bypasses the colour stages whose
 * tables lie in a binding: a stream carrying that state loads, the
 * destination shows what the source showed, and copies the tables at
 * its next doorbell once bus mastering is on.
 */
static void test_bypassed_colour_stages_migrate(void)
{
    g_autofree uint32_t *plain = NULL;
    g_autofree Scene *sc = g_new0(Scene, 1);
    static const int identity[3] = { 0, 4, 8 };
    uint8_t lut[LUT_LEN], ctm[PVDC_CTM_SIZE];
    uint64_t pages[TABLE_PAGES];
    uint32_t crc_plain, c;
    PVDCTest dst;
    Mem m;

    make_colour_tables(lut, ctm, identity);
    mem_start(&m);
    crc_plain = scene_from_vram(&m, sc, &plain);
    c = bind_table_pages(&m, pages);
    bound_write_tables(&m, pages, lut, ctm);
    set_bus_master(&m.t, false);
    g_assert_cmphex(show_colour(&m.t, c + LUT_REL, c + CTM_REL), ==,
                    PVDC_RESULT_APPLIED);
    g_assert_cmphex(crc_now(&m.t), ==, crc_plain);

    pvdc_test_migrate(&m.t, &dst, PROPS, EXTRA);
    pvdc_step_to_next_vblank(&dst, 0);
    g_assert_cmphex(crc_now(&dst), ==, crc_plain);
    set_bus_master(&dst, true);
    g_assert_cmphex(show_colour(&dst, c + LUT_REL, c + CTM_REL), ==,
                    PVDC_RESULT_APPLIED);
    g_assert_cmphex(crc_now(&dst), !=, crc_plain);
    pvdc_test_stop(&dst);
    mem_stop(&m);
}

/* The destination scans out of the bindings the stream brings. */
static void test_scanout_of_bindings_migrates(const void *extra)
{
    g_autofree uint32_t *from_vram = NULL, *after = NULL;
    g_autofree Scene *sc = g_new0(Scene, 1);
    uint32_t crc;
    PVDCTest dst;
    Mem m;

    mem_start_with(&m, extra);
    crc = scene_from_bindings(&m, sc, &from_vram);

    pvdc_test_migrate(&m.t, &dst, PROPS, extra);
    pvdc_step_to_next_vblank(&dst, 0);
    g_assert_cmphex(crc_now(&dst), ==, crc);
    after = dump(&dst);
    assert_same_picture(from_vram, after);
    g_assert_cmphex(pvdc_unbind_range(&dst, m.base, A_PAGES * PAGE), ==,
                    PVDC_BIND_ERR_BUSY);
    pvdc_test_stop(&dst);
    mem_stop(&m);
}

/* ------------------------------------------------------------------------ */
/* RAM that leaves the memory map                                           */
/* ------------------------------------------------------------------------ */

/* A DIMM of guest RAM besides the 128 MiB, which the guest may eject. */
#define DIMM_EXTRA          EXTRA ",slots=1,maxmem=1G " \
                            "-object memory-backend-ram,id=dimm-mem," \
                            "size=128M -device pc-dimm,id=dimm,memdev=dimm-mem"
/*
 * ICH9's ACPI memory hotplug registers (docs/specs/acpi_mem_hotplug.rst):
 * the slot selector, and the flags byte whose bit 3 ejects the slot.
 */
#define MEMHP_SELECTOR      0x0
#define MEMHP_FLAGS         0x14
#define MEMHP_EJECT         (1u << 3)

/* The guest address of the DIMM, the machine's only memory device. */
static uint64_t dimm_addr(QTestState *qts)
{
    QDict *rsp = qtest_qmp(qts, "{ 'execute': 'query-memory-devices' }");
    QList *list = qdict_get_qlist(rsp, "return");
    QDict *dev;
    uint64_t addr;

    g_assert_cmpuint(qlist_size(list), ==, 1);
    dev = qobject_to(QDict, qlist_peek(list));
    addr = qdict_get_int(qdict_get_qdict(dev, "data"), "addr");
    qobject_unref(rsp);
    return addr;
}

static unsigned int memory_devices(QTestState *qts)
{
    QDict *rsp = qtest_qmp(qts, "{ 'execute': 'query-memory-devices' }");
    unsigned int n = qlist_size(qdict_get_qlist(rsp, "return"));

    qobject_unref(rsp);
    return n;
}

/*
 * The guest ejects the DIMM through ACPI, as its OS does once it has
 * offlined the memory, and as a hostile guest may do at any time.
 */
static void eject_dimm(QTestState *qts)
{
    qtest_outl(qts, ACPI_MEMORY_HOTPLUG_BASE + MEMHP_SELECTOR, 0);
    qtest_outb(qts, ACPI_MEMORY_HOTPLUG_BASE + MEMHP_FLAGS, MEMHP_EJECT);
}

static void assert_shows(PVDCTest *t, const uint8_t *fb)
{
    g_autofree uint32_t *shown = dump(t);

    for (int i = 0; i < MODE_W * MODE_H; i++) {
        g_assert_cmphex(shown[i], ==, ldl_le_p(fb + i * 4) & 0xffffff);
    }
}

static void assert_background(PVDCTest *t)
{
    g_autofree uint32_t *shown = dump(t);

    for (int i = 0; i < MODE_W * MODE_H; i++) {
        g_assert_cmphex(shown[i], ==, BACKGROUND);
    }
}

#define FB_SIZE             (MODE_PITCH * MODE_H)
#define FB_PAGES            (FB_SIZE / PAGE)

/*
 * @fb, a picture, in the DIMM's first pages, bound at m->base (the lost
 * binding to be), and in scattered pages of RAM, bound right after it;
 * head 0 shows the DIMM's, and the guest ejects the DIMM.  Returns the
 * DIMM's address.
 */
static uint64_t eject_shown_dimm(Mem *m, uint8_t *fb)
{
    uint64_t dimm = dimm_addr(m->t.qts);

    g_assert_cmpint(FB_PAGES, <=, BUF_PAGES);
    for (uint32_t i = 0; i < FB_SIZE; i++) {
        fb[i] = i * 7 + (i >> 8);
    }
    qtest_memwrite(m->t.qts, dimm, fb, FB_SIZE);
    for (int i = 0; i < FB_PAGES; i++) {
        qtest_memwrite(m->t.qts, page_of(m, 0, FB_PAGES, i * PAGE),
                       fb + i * PAGE, PAGE);
    }
    g_assert_cmphex(bind_one(m, m->base, FB_SIZE, dimm, FB_SIZE), ==,
                    PVDC_BIND_OK);
    g_assert_cmphex(bind_pages(m, m->base + FB_SIZE, 0, FB_PAGES), ==,
                    PVDC_BIND_OK);
    pvdc_write_mode(&m->t, 0, CLOCK_1MS);
    pvdc_wr_head(&m->t, 0, PVDC_HS_BACKGROUND, BACKGROUND);
    pvdc_wr(&m->t, PVDC_HEAD_CONTROL(0) + PVDC_HEAD_CRC_CTRL,
            PVDC_CRC_CTRL_ENABLE);
    pvdc_write_plane(&m->t, pvdc_plane_of(&m->t, 0, PRIMARY), 0, m->base, 0);
    g_assert_cmphex(pvdc_commit(&m->t, 0), ==, PVDC_RESULT_APPLIED);
    assert_shows(&m->t, fb);

    eject_dimm(m->t.qts);
    g_assert_cmpuint(memory_devices(m->t.qts), ==, 0);
    return dimm;
}

/* Head 0 moves to the binding of RAM, and the lost one is unbound. */
static void move_off_the_lost_binding(Mem *m, const uint8_t *fb)
{
    pvdc_write_plane(&m->t, pvdc_plane_of(&m->t, 0, PRIMARY), 0,
                     m->base + FB_SIZE, 0);
    g_assert_cmphex(pvdc_commit(&m->t, 0), ==, PVDC_RESULT_APPLIED);
    assert_shows(&m->t, fb);
    g_assert_cmphex(pvdc_unbind_range(&m->t, m->base, FB_SIZE), ==,
                    PVDC_BIND_OK);
    assert_shows(&m->t, fb);
}

/*
 * RAM may leave the memory map under a binding: the guest ejects the
 * DIMM that holds a framebuffer a head shows.  The device never reads
 * it again, nor lets the UI read it: the plane is not shown, the CRC is
 * the background's.  The binding stays, busy while the state names it,
 * until UNBIND releases the memory, which is freed then if its backend
 * was deleted meanwhile.  A binding whose pages stayed RAM shows on.
 */
static void test_ram_unplugged_under_a_binding(void)
{
    g_autofree uint8_t *fb = g_malloc(FB_SIZE);
    uint64_t dimm;
    Mem m;

    mem_start_with(&m, DIMM_EXTRA);
    dimm = eject_shown_dimm(&m, fb);
    pvdc_step_to_next_vblank(&m.t, 0);
    g_assert_cmphex(crc_now(&m.t), ==, background_crc());
    assert_background(&m.t);
    /* Its memory outlives the backend while bound; nothing reads it. */
    qtest_qmp_assert_success(m.t.qts, "{ 'execute': 'object-del', "
                             "'arguments': { 'id': 'dimm-mem' } }");
    assert_background(&m.t);
    /* No RAM there any more, and the binding is still in use. */
    g_assert_cmphex(bind_one(&m, m.base + 2 * FB_SIZE, FB_SIZE, dimm,
                             FB_SIZE), ==, PVDC_BIND_ERR_DMA);
    g_assert_cmphex(pvdc_unbind_range(&m.t, m.base, FB_SIZE), ==,
                    PVDC_BIND_ERR_BUSY);
    move_off_the_lost_binding(&m, fb);
    mem_stop(&m);
}

/*
 * Save @t's machine into @path and load it into a new one, started
 * with @extra (its stderr in @log): whether it loads.  @t goes on.
 * Once per machine: QEMU forgets the file name of a first migration
 * to a file when a second one starts (a leak LeakSanitizer reports).
 */
static bool migrates(PVDCTest *t, const char *extra, const char *path,
                     const char *log)
{
    g_autofree char *uri = g_strdup_printf("file:%s", path);
    g_autofree char *args = g_strdup_printf("%s -incoming defer 2>%s", extra,
                                            log);
    QTestState *dst;
    bool loaded;

    qtest_qmp_assert_success(t->qts, "{ 'execute': 'migrate', "
                             "'arguments': { 'uri': %s } }", uri);
    g_assert_true(pvdc_migration_wait(t->qts));
    qtest_qmp_assert_success(t->qts, "{ 'execute': 'cont' }");
    dst = pvdc_test_spawn(PROPS, args);
    qtest_qmp_assert_success(dst, "{ 'execute': 'migrate-incoming', "
                             "'arguments': { 'uri': %s, "
                             "'exit-on-error': false } }", uri);
    loaded = pvdc_migration_wait(dst);
    qtest_quit(dst);
    return loaded;
}

/*
 * A machine with a lost binding does not migrate: the destination finds
 * no RAM under its entries and refuses the stream, as BIND would; the
 * source goes on, and migrates once the guest has unbound it (the
 * binding of RAM comes along).
 */
static void test_lost_binding_is_not_loaded(void)
{
    g_autofree uint8_t *fb = g_malloc(FB_SIZE);
    g_autofree char *dir = g_dir_make_tmp("pvdc-memory-XXXXXX", NULL);
    g_autofree char *state = g_build_filename(dir, "state", NULL);
    g_autofree char *log = g_build_filename(dir, "stderr", NULL);
    g_autofree char *err = NULL, *says = NULL;
    const char *extra = EXTRA ",slots=1,maxmem=1G";
    PVDCTest dst;
    Mem m;

    mem_start_with(&m, DIMM_EXTRA);
    eject_shown_dimm(&m, fb);
    qtest_qmp_assert_success(m.t.qts, "{ 'execute': 'object-del', "
                             "'arguments': { 'id': 'dimm-mem' } }");
    g_assert_false(migrates(&m.t, extra, state, log));
    g_assert(g_file_get_contents(log, &err, NULL, NULL));
    says = g_strdup_printf("pvdc: binding 0 at 0x%x+0x%x: status %u",
                           m.base, FB_SIZE, PVDC_BIND_ERR_DMA);
    g_assert_nonnull(strstr(err, says));
    assert_background(&m.t);

    move_off_the_lost_binding(&m, fb);
    pvdc_test_migrate(&m.t, &dst, PROPS, extra);
    g_assert_cmpuint(pvdc_statistic(dst.qts, "x-bindings"), ==, 1);
    assert_shows(&dst, fb);
    pvdc_test_stop(&dst);
    unlink(state);
    unlink(log);
    rmdir(dir);
    mem_stop(&m);
}

/* ------------------------------------------------------------------------ */
/* Eight heads at 7680x4320 from guest RAM                                  */
/* ------------------------------------------------------------------------ */

/*
 * What a user sets for eight 8K heads (docs/system/devices/pvdc.rst,
 * "Sizing"): the largest mode, nothing else.  The default VRAM is small
 * (framebuffers in guest RAM need none), and the derived bandwidth covers
 * two full-screen planes a head.  q35 puts all RAM past 2 GiB above
 * 4 GiB, where the buffers are (guest RAM costs the host only where
 * written).
 */
#define BIG_PROPS           "heads=8,max-width=7680,max-height=4320"
#define BIG_EXTRA           "-m 6G"
#define BIG_RAM_HIGH        (4 * GiB)
#define BIG_RAM_HIGH_SIZE   (4 * GiB)
#define BIG_HEADS           8
#define BIG_W               7680
#define BIG_H               4320
#define BIG_PITCH           (BIG_W * MODE_CPP)
#define BIG_FB              ((uint64_t)BIG_PITCH * BIG_H)
/* reduced blanking, a frame of exactly 20 ms (50 Hz) */
#define BIG_HTOTAL          7760
#define BIG_VTOTAL          4400
#define BIG_CLOCK           (BIG_HTOTAL * BIG_VTOTAL / 20)
/* the front buffers, then the back buffers a page flip shows */
#define BIG_SETS            2
#define BIG_BUFFERS         (BIG_SETS * BIG_HEADS * 2)
/* a square each buffer shows, at a place and in a colour of its own */
#define PATCH               16

typedef struct BigHead {
    uint32_t x[2], y[2];        /* the primary's square, the overlay's */
    uint32_t argb[2];
} BigHead;

static BigHead big_head(unsigned int set, unsigned int h)
{
    return (BigHead) {
        .x = { 64 + h * 960, BIG_W - 128 - h * 960 },
        .y = { 64 + h * 520 + set * 256, 96 + h * 520 + set * 256 },
        .argb = { 0x00400008 + h * 0x001020 + set * 0x300000,
                  0xff00c000 + h * 0x0a0001 + set * 0x40 },
    };
}

static bool in_patch(const BigHead *b, int k, uint32_t x, uint32_t y)
{
    return x - b->x[k] < PATCH && y - b->y[k] < PATCH;
}

/* Buffer @k (0: primary, 1: overlay) of head @h in @set, in guest RAM. */
static uint64_t big_ram(unsigned int set, unsigned int h, int k)
{
    return BIG_RAM_HIGH + ((set * BIG_HEADS + h) * 2 + k) * BIG_FB;
}

/* The same buffer in the device address space. */
static uint32_t big_addr(PVDCTest *t, unsigned int set, unsigned int h,
                         int k)
{
    return t->vram_size + ((set * BIG_HEADS + h) * 2 + k) * BIG_FB;
}

/* Draw the squares of @set, head @h, and bind its two buffers. */
static void big_bind(PVDCTest *t, uint64_t table, unsigned int set,
                     unsigned int h)
{
    BigHead b = big_head(set, h);
    uint32_t row[PATCH];

    for (int k = 0; k < 2; k++) {
        uint64_t e[2] = { big_ram(set, h, k), BIG_FB };

        for (int i = 0; i < PATCH; i++) {
            row[i] = cpu_to_le32(b.argb[k]);
        }
        for (int y = 0; y < PATCH; y++) {
            qtest_memwrite(t->qts, big_ram(set, h, k) +
                           (uint64_t)(b.y[k] + y) * BIG_PITCH +
                           b.x[k] * MODE_CPP, row, sizeof(row));
        }
        pvdc_write_bind_table(t, table, e, 1);
        g_assert_cmphex(pvdc_bind_range(t, big_addr(t, set, h, k), BIG_FB,
                                        table, 1), ==, PVDC_BIND_OK);
    }
}

/*
 * Head @h in the 8K mode, its primary (XRGB8888) and an overlay
 * (ARGB8888, transparent where the guest did not draw: guest RAM starts
 * zeroed) full-screen, so that both buffers of the head show.
 */
static void big_head_state(PVDCTest *t, unsigned int h)
{
    unsigned int pri = pvdc_plane_of(t, h, PRIMARY);
    unsigned int ov = pvdc_plane_of(t, h, OVERLAY(0));

    pvdc_write_mode_sized(t, h, BIG_W, BIG_H, BIG_HTOTAL, BIG_VTOTAL,
                          BIG_CLOCK);
    pvdc_wr_plane(t, pri, PVDC_PS_HEAD, h);
    pvdc_write_fb(t, pri, PVDC_FMT_XRGB8888, big_addr(t, 0, h, 0), BIG_PITCH,
                  BIG_W, BIG_H);
    pvdc_wr_plane(t, pri, PVDC_PS_ZPOS, 0);
    pvdc_wr_plane(t, pri, PVDC_PS_ALPHA, 0xffff);
    pvdc_wr_plane(t, pri, PVDC_PS_CTRL, PVDC_PS_CTRL_ENABLE);
    pvdc_wr_plane(t, ov, PVDC_PS_HEAD, h);
    pvdc_write_fb(t, ov, PVDC_FMT_ARGB8888, big_addr(t, 0, h, 1), BIG_PITCH,
                  BIG_W, BIG_H);
    pvdc_wr_plane(t, ov, PVDC_PS_ZPOS, 1);
    pvdc_wr_plane(t, ov, PVDC_PS_ALPHA, 0xffff);
    pvdc_wr_plane(t, ov, PVDC_PS_CTRL, PVDC_PS_CTRL_ENABLE |
                  PVDC_BLEND_PREMULTI << PVDC_PS_CTRL_BLEND_SHIFT);
}

/* Commit all heads as one group: each applies. */
static void big_commit(PVDCTest *t)
{
    pvdc_wr(t, PVDC_REG_MULTI_DOORBELL, MAKE_64BIT_MASK(0, BIG_HEADS));
    for (unsigned int h = 0; h < BIG_HEADS; h++) {
        g_assert_cmphex(pvdc_wait_outcome(t, h, NANOSECONDS_PER_SECOND), ==,
                        PVDC_RESULT_APPLIED);
    }
}

/* Console @h shows the buffers of head @h in @set, pixel for pixel. */
static void big_assert_shows(PVDCTest *t, unsigned int set, unsigned int h)
{
    BigHead b = big_head(set, h);
    g_autofree uint32_t *shown = NULL;
    int w, ht;

    g_test_message("head %u, buffers %u", h, set);
    shown = pvdc_screendump(t->qts, h, &w, &ht);
    g_assert_cmpint(w, ==, BIG_W);
    g_assert_cmpint(ht, ==, BIG_H);
    for (uint32_t y = 0; y < BIG_H; y++) {
        for (uint32_t x = 0; x < BIG_W; x++) {
            uint32_t want = in_patch(&b, 1, x, y) ? b.argb[1] :
                            in_patch(&b, 0, x, y) ? b.argb[0] : 0;

            if (shown[y * BIG_W + x] != (want & 0xffffff)) {
                g_error("head %u, pixel (%u, %u): 0x%06x, expected 0x%06x",
                        h, x, y, shown[y * BIG_W + x], want & 0xffffff);
            }
        }
    }
}

/*
 * Eight heads at 7680x4320, each showing two full-screen 32-bit planes
 * double-buffered: 32 buffers of 126.5 MiB, one binding each, in guest
 * RAM above 4 GiB.  With the default VRAM (16 MiB) the 4 GiB device
 * address space holds 32 of them and not one more.  One group commit
 * enables every head, a second flips them all to the back buffers,
 * writing only the planes' offsets; each head shows its own buffers,
 * pixel for pixel.
 */
static void test_eight_8k_heads_scan_out_of_guest_ram(void)
{
    static const unsigned int checked[] = { 0, 3, BIG_HEADS - 1 };
    QGuestAllocator alloc;
    uint64_t table;
    PVDCTest t;

    g_assert_cmpuint(BIG_BUFFERS * BIG_FB, <=, BIG_RAM_HIGH_SIZE);
    g_assert_cmpuint(BIG_FB % PAGE, ==, 0);
    g_assert_cmpuint(BIG_CLOCK, <=, PVDC_MAX_PIXEL_CLOCK_KHZ);
    pvdc_test_start_with(&t, BIG_PROPS, BIG_EXTRA);
    g_assert_cmpuint(t.heads, ==, BIG_HEADS);
    g_assert_cmpuint(pvdc_rd(&t, PVDC_REG_BIND_SPACE), ==,
                     4 * GiB - t.vram_size);
    g_assert_cmphex(pvdc_rd(&t, PVDC_REG_MAX_SIZE), ==, PVDC_XY(BIG_W, BIG_H));
    pc_alloc_init(&alloc, t.qts, ALLOC_NO_FLAGS);
    table = guest_alloc(&alloc, PVDC_BIND_ENTRY_SIZE);

    for (unsigned int set = 0; set < BIG_SETS; set++) {
        for (unsigned int h = 0; h < BIG_HEADS; h++) {
            big_bind(&t, table, set, h);
        }
    }
    g_assert_cmpuint(pvdc_statistic(t.qts, "x-bindings"), ==, BIG_BUFFERS);
    /* A 33rd would end past 2^32. */
    g_assert_cmpuint(t.vram_size + (BIG_BUFFERS + 1) * BIG_FB, >, 4 * GiB);
    g_assert_cmphex(pvdc_bind_range(&t, t.vram_size + BIG_BUFFERS * BIG_FB,
                                    BIG_FB, table, 1), ==, PVDC_BIND_ERR_RANGE);

    for (unsigned int h = 0; h < BIG_HEADS; h++) {
        big_head_state(&t, h);
    }
    big_commit(&t);
    for (int i = 0; i < ARRAY_SIZE(checked); i++) {
        big_assert_shows(&t, 0, checked[i]);
    }

    for (unsigned int h = 0; h < BIG_HEADS; h++) {
        pvdc_wr_plane(&t, pvdc_plane_of(&t, h, PRIMARY), PVDC_PS_FB_OFFSET,
                      big_addr(&t, 1, h, 0));
        pvdc_wr_plane(&t, pvdc_plane_of(&t, h, OVERLAY(0)), PVDC_PS_FB_OFFSET,
                      big_addr(&t, 1, h, 1));
    }
    big_commit(&t);
    for (int i = 0; i < ARRAY_SIZE(checked); i++) {
        big_assert_shows(&t, 1, checked[i]);
    }
    /* The front buffers are shown nowhere now: they unbind. */
    g_assert_cmphex(pvdc_unbind_range(&t, big_addr(&t, 1, 0, 0), BIG_FB), ==,
                    PVDC_BIND_ERR_BUSY);
    g_assert_cmphex(pvdc_unbind_range(&t, big_addr(&t, 0, 0, 0), BIG_FB), ==,
                    PVDC_BIND_OK);
    alloc_destroy(&alloc);
    pvdc_test_stop(&t);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);

    qtest_add_func("/pvdc/memory/device-offers-guest-memory",
                   test_device_offers_guest_memory);
    qtest_add_func("/pvdc/memory/scattered-pages-bind-and-unbind",
                   test_scattered_pages_bind_and_unbind);
    qtest_add_func("/pvdc/memory/hostile-ranges-are-refused",
                   test_hostile_ranges_are_refused);
    qtest_add_func("/pvdc/memory/bind-space-bounds-bindings",
                   test_bind_space_bounds_bindings);
    qtest_add_func("/pvdc/memory/hostile-tables-are-refused",
                   test_hostile_tables_are_refused);
    qtest_add_func("/pvdc/memory/memory-that-is-not-ram-is-refused",
                   test_memory_that_is_not_ram_is_refused);
    qtest_add_func("/pvdc/memory/bus-mastering-off-refuses-binds",
                   test_bus_mastering_off_refuses_binds);
    qtest_add_func("/pvdc/memory/limits-are-kept",
                   test_limits_are_kept);
    qtest_add_func("/pvdc/memory/reset-drops-every-binding",
                   test_reset_drops_every_binding);
    qtest_add_func("/pvdc/memory/bindings-come-along",
                   test_bindings_come_along);
    qtest_add_data_func("/pvdc/memory/planes-scan-out-of-bindings", EXTRA,
                        test_planes_scan_out_of_bindings);
    qtest_add_func("/pvdc/memory/one-plane-shows-straight-from-a-binding",
                   test_one_plane_shows_straight_from_a_binding);
    qtest_add_func("/pvdc/memory/bytes-copied-per-frame",
                   test_bytes_copied_per_frame);
    qtest_add_func("/pvdc/memory/contiguous-entries-are-merged",
                   test_contiguous_entries_are_merged);
    qtest_add_func("/pvdc/memory/ranges-across-bindings-are-refused",
                   test_ranges_across_bindings_are_refused);
    qtest_add_func("/pvdc/memory/bindings-in-use-are-busy",
                   test_bindings_in_use_are_busy);
    qtest_add_func("/pvdc/memory/bus-mastering-off-blanks-bound-planes",
                   test_bus_mastering_off_blanks_bound_planes);
    qtest_add_func("/pvdc/memory/writeback-of-planes-in-bindings",
                   test_writeback_of_planes_in_bindings);
    qtest_add_data_func("/pvdc/memory/writeback-into-a-binding", EXTRA,
                        test_writeback_into_a_binding);
    qtest_add_func("/pvdc/memory/writeback-into-a-shown-binding-shows",
                   test_writeback_into_a_shown_binding_shows);
    qtest_add_func("/pvdc/memory/colour-tables-in-a-binding",
                   test_colour_tables_in_a_binding);
    qtest_add_func("/pvdc/memory/bypassed-colour-stages-migrate",
                   test_bypassed_colour_stages_migrate);
    qtest_add_data_func("/pvdc/memory/scanout-of-bindings-migrates", EXTRA,
                        test_scanout_of_bindings_migrates);
    /* the same from guest RAM in a memfd, through host views */
    qtest_add_data_func("/pvdc/memory/memfd/planes-scan-out-of-bindings",
                        EXTRA_MEMFD, test_planes_scan_out_of_bindings);
    qtest_add_data_func("/pvdc/memory/memfd/writeback-into-a-binding",
                        EXTRA_MEMFD, test_writeback_into_a_binding);
    qtest_add_data_func("/pvdc/memory/memfd/scanout-of-bindings-migrates",
                        EXTRA_MEMFD, test_scanout_of_bindings_migrates);
    qtest_add_func("/pvdc/memory/memfd/scattered-pages-show-without-copies",
                   test_memfd_scattered_pages_show_without_copies);
    qtest_add_func("/pvdc/memory/memfd/host-views-are-unmapped",
                   test_memfd_host_views_are_unmapped);
    qtest_add_func("/pvdc/memory/memfd/host-views-are-bounded",
                   test_memfd_host_views_are_bounded);
    qtest_add_func("/pvdc/memory/ram-unplugged-under-a-binding",
                   test_ram_unplugged_under_a_binding);
    qtest_add_func("/pvdc/memory/lost-binding-is-not-loaded",
                   test_lost_binding_is_not_loaded);
    qtest_add_func("/pvdc/memory/eight-8k-heads-scan-out-of-guest-ram",
                   test_eight_8k_heads_scan_out_of_guest_ram);
    return g_test_run();
}
