/*
 * QTest cases for pvdc's guest memory: ranges of guest pages bound into
 * the device address space above VRAM (BIND_*), as docs/specs/pvdc.rst
 * specifies them.
 *
 * Every BIND checks its range, its table and every page before it maps
 * anything: each hostile case below has its BIND_STATUS, and leaves the
 * device as it was (the bindings it holds, x-bindings).  The guest pages
 * come from libqos' allocator, one page at a time and listed in reverse
 * order, so that no binding is contiguous in guest memory (the memory
 * qtest library, pvdc-qtest-memory.h).  Planes shown from bindings are
 * pvdc-memory-scanout-test's; RAM that leaves the memory map under a
 * binding, and heads shown from guest RAM above 4 GiB, are
 * pvdc-memory-ram-test's.  Run under ASan and LeakSanitizer by the
 * qtest-pvdc-memory-asan suite: a mapping left behind by a reset or a
 * refused bind is reported there.
 *
 * Copyright (c) 2026 The pvdc authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "pvdc-qtest-memory.h"

static void test_device_offers_guest_memory(void)
{
    static const uint32_t regs[] = {
        PVDC_REG_BIND_ADDR, PVDC_REG_BIND_SIZE, PVDC_REG_BIND_TABLE_LO,
        PVDC_REG_BIND_TABLE_HI, PVDC_REG_BIND_ENTRIES,
    };
    PVDCTest t;

    pvdc_test_start(&t, MEM_PROPS);
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
    PVDCMem m;

    pvdc_mem_start(&m);
    repeated[0] = repeated[2] = m.pages[0];
    repeated[1] = repeated[3] = PAGE;
    g_assert_cmphex(pvdc_mem_bind_scattered(&m, m.base), ==, PVDC_BIND_OK);
    g_assert_cmpuint(pvdc_mem_bindings(&m), ==, 1);
    /* The same page twice, in one binding and in two: just pages. */
    pvdc_write_bind_table(&m.t, m.table, repeated, 2);
    g_assert_cmphex(pvdc_bind_range(&m.t, m.base + size, 2 * PAGE, m.table, 2),
                    ==, PVDC_BIND_OK);
    g_assert_cmpuint(pvdc_mem_bindings(&m), ==, 2);

    /* An unknown command changes nothing, the status included. */
    pvdc_wr(&m.t, PVDC_REG_BIND_CMD, 3);
    g_assert_cmphex(pvdc_rd(&m.t, PVDC_REG_BIND_STATUS), ==, PVDC_BIND_OK);
    g_assert_cmpuint(pvdc_mem_bindings(&m), ==, 2);

    /* Only exactly one binding unbinds. */
    g_assert_cmphex(pvdc_unbind_range(&m.t, m.base, size / 2), ==,
                    PVDC_BIND_ERR_NOT_BOUND);
    g_assert_cmphex(pvdc_unbind_range(&m.t, m.base + PAGE, size - PAGE), ==,
                    PVDC_BIND_ERR_NOT_BOUND);
    g_assert_cmphex(pvdc_unbind_range(&m.t, m.base, size + 2 * PAGE), ==,
                    PVDC_BIND_ERR_NOT_BOUND);
    g_assert_cmpuint(pvdc_mem_bindings(&m), ==, 2);
    g_assert_cmphex(pvdc_unbind_range(&m.t, m.base, size), ==, PVDC_BIND_OK);
    g_assert_cmpuint(pvdc_mem_bindings(&m), ==, 1);
    g_assert_cmphex(pvdc_unbind_range(&m.t, m.base, size), ==,
                    PVDC_BIND_ERR_NOT_BOUND);
    g_assert_cmphex(pvdc_unbind_range(&m.t, m.base + size, 2 * PAGE), ==,
                    PVDC_BIND_OK);
    g_assert_cmpuint(pvdc_mem_bindings(&m), ==, 0);
    /* The range is free again. */
    g_assert_cmphex(pvdc_mem_bind_scattered(&m, m.base), ==, PVDC_BIND_OK);
    pvdc_mem_stop(&m);
}

/*
 * BIND_SPACE is the address space above VRAM: the rest of 2^32, or what
 * x-bind-space leaves a test; a binding ends at its end at the latest.
 */
#define SMALL_BIND_SPACE    (16 * PAGE)

static void test_bind_space_bounds_bindings(void)
{
    g_autofree char *props =
        g_strdup_printf(MEM_PROPS ",x-bind-space=%d", SMALL_BIND_SPACE);
    PVDCMem m;

    pvdc_mem_start(&m);
    g_assert_cmphex(pvdc_rd(&m.t, PVDC_REG_BIND_SPACE), ==,
                    4 * GiB - m.t.vram_size);
    /* Read-only. */
    pvdc_wr(&m.t, PVDC_REG_BIND_SPACE, SMALL_BIND_SPACE);
    g_assert_cmphex(pvdc_rd(&m.t, PVDC_REG_BIND_SPACE), ==,
                    4 * GiB - m.t.vram_size);
    pvdc_mem_stop(&m);

    pvdc_mem_start_props(&m, props, MEM_EXTRA);
    g_assert_cmphex(pvdc_rd(&m.t, PVDC_REG_BIND_SPACE), ==, SMALL_BIND_SPACE);
    g_assert_cmphex(pvdc_mem_bind_one(&m, m.base + SMALL_BIND_SPACE, PAGE,
                                      m.pages[0], PAGE), ==,
                    PVDC_BIND_ERR_RANGE);
    g_assert_cmphex(pvdc_mem_bind_one(&m, m.base + SMALL_BIND_SPACE - PAGE,
                                      2 * PAGE, m.pages[0], 2 * PAGE), ==,
                    PVDC_BIND_ERR_RANGE);
    g_assert_cmpuint(pvdc_mem_bindings(&m), ==, 0);
    /* Its last page binds. */
    g_assert_cmphex(pvdc_mem_bind_one(&m, m.base + SMALL_BIND_SPACE - PAGE,
                                      PAGE, m.pages[0], PAGE), ==,
                    PVDC_BIND_OK);
    g_assert_cmpuint(pvdc_mem_bindings(&m), ==, 1);
    pvdc_mem_stop(&m);
}

static void test_hostile_ranges_are_refused(void)
{
    PVDCMem m;

    pvdc_mem_start(&m);
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
        g_assert_cmphex(pvdc_mem_bind_one(&m, cases[i].addr, cases[i].size,
                                          m.pages[0], cases[i].size), ==,
                        cases[i].status);
    }
    g_assert_cmpuint(pvdc_mem_bindings(&m), ==, 0);

    /* The last page of the device address space binds. */
    g_assert_cmphex(pvdc_mem_bind_one(&m, 0xfffff000, PAGE, m.pages[0], PAGE),
                    ==, PVDC_BIND_OK);
    /* Bindings do not overlap, but may touch. */
    g_assert_cmphex(pvdc_mem_bind_scattered(&m, m.base + 4 * PAGE), ==,
                    PVDC_BIND_OK);
    g_assert_cmphex(pvdc_mem_bind_scattered(&m, m.base + 8 * PAGE), ==,
                    PVDC_BIND_ERR_OVERLAP);
    g_assert_cmphex(pvdc_mem_bind_scattered(&m, m.base), ==,
                    PVDC_BIND_ERR_OVERLAP);
    g_assert_cmphex(pvdc_mem_bind_one(&m, m.base + (4 + BUF_PAGES - 1) * PAGE,
                                      PAGE, m.pages[0], PAGE), ==,
                    PVDC_BIND_ERR_OVERLAP);
    g_assert_cmphex(pvdc_mem_bind_one(&m, 0xffffe000, 2 * PAGE, m.pages[0],
                                      2 * PAGE), ==, PVDC_BIND_ERR_OVERLAP);
    g_assert_cmpuint(pvdc_mem_bindings(&m), ==, 2);
    g_assert_cmphex(pvdc_mem_bind_one(&m, m.base + 3 * PAGE, PAGE, m.pages[0],
                                      PAGE), ==, PVDC_BIND_OK);
    g_assert_cmphex(pvdc_mem_bind_one(&m, m.base + (4 + BUF_PAGES) * PAGE,
                                      PAGE, m.pages[0], PAGE), ==,
                    PVDC_BIND_OK);
    g_assert_cmpuint(pvdc_mem_bindings(&m), ==, 4);
    pvdc_mem_stop(&m);
}

static void test_hostile_tables_are_refused(void)
{
    PVDCMem m;
    uint32_t status;

    pvdc_mem_start(&m);
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
        g_assert_cmpuint(pvdc_mem_bindings(&m), ==, 0);
        /* 8-byte aligned is enough: the entry at table + 8 */
        pvdc_write_bind_table(&m.t, m.table + 8, e, 1);
        status = pvdc_bind_range(&m.t, m.base, PAGE, m.table + 8, 1);
        g_assert_cmphex(status, ==, PVDC_BIND_OK);
    }
    g_assert_cmpuint(pvdc_mem_bindings(&m), ==, 1);
    pvdc_mem_stop(&m);
}

/*
 * Tables and pages that are not guest RAM: the device reads and maps
 * nothing of them.  Its own register BAR read by DMA would re-enter the
 * device (CVE-2021-3750); MMIO of any kind, ROM and addresses past RAM
 * are refused alike.
 */
static void test_memory_that_is_not_ram_is_refused(void)
{
    PVDCMem m;

    pvdc_mem_start(&m);
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
        g_assert_cmphex(pvdc_mem_bind_one(&m, m.base, where[i].len,
                                          where[i].addr, where[i].len), ==,
                        PVDC_BIND_ERR_DMA);

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
    g_assert_cmpuint(pvdc_mem_bindings(&m), ==, 0);
    /* The last page of RAM is RAM. */
    g_assert_cmphex(pvdc_mem_bind_one(&m, m.base, PAGE, RAM_SIZE - PAGE, PAGE),
                    ==, PVDC_BIND_OK);
    g_assert_cmpuint(pvdc_mem_bindings(&m), ==, 1);
    pvdc_mem_stop(&m);
}

/* Without bus mastering the device reaches no memory, but keeps what it has. */
static void test_bus_mastering_off_refuses_binds(void)
{
    PVDCMem m;

    pvdc_mem_start(&m);
    g_assert_cmphex(pvdc_mem_bind_scattered(&m, m.base), ==, PVDC_BIND_OK);
    pvdc_set_bus_master(&m.t, false);
    g_assert_cmphex(pvdc_mem_bind_scattered(&m, m.base + BUF_PAGES * PAGE), ==,
                    PVDC_BIND_ERR_DMA);
    g_assert_cmpuint(pvdc_mem_bindings(&m), ==, 1);
    pvdc_set_bus_master(&m.t, true);
    g_assert_cmphex(pvdc_mem_bind_scattered(&m, m.base + BUF_PAGES * PAGE), ==,
                    PVDC_BIND_OK);
    pvdc_set_bus_master(&m.t, false);
    /* Unbinding needs no DMA. */
    g_assert_cmphex(pvdc_unbind_range(&m.t, m.base, BUF_PAGES * PAGE), ==,
                    PVDC_BIND_OK);
    g_assert_cmpuint(pvdc_mem_bindings(&m), ==, 1);
    pvdc_mem_stop(&m);
}

/* PVDC_MAX_BINDINGS bindings, and PVDC_MAX_BIND_ENTRIES entries in all. */
static void test_limits_are_kept(void)
{
    const uint32_t half = PVDC_MAX_BIND_ENTRIES / 2;
    g_autofree uint64_t *e = g_new(uint64_t, 2 * half);
    uint64_t big;
    PVDCMem m;

    pvdc_mem_start(&m);
    for (uint32_t i = 0; i < PVDC_MAX_BINDINGS; i++) {
        g_assert_cmphex(pvdc_mem_bind_one(&m, m.base + i * PAGE, PAGE,
                                          m.pages[i % 2], PAGE), ==,
                        PVDC_BIND_OK);
    }
    g_assert_cmpuint(pvdc_mem_bindings(&m), ==, PVDC_MAX_BINDINGS);
    g_assert_cmphex(pvdc_mem_bind_one(&m, m.base + PVDC_MAX_BINDINGS * PAGE,
                                      PAGE, m.pages[0], PAGE), ==,
                    PVDC_BIND_ERR_NOSPC);
    for (uint32_t i = 0; i < PVDC_MAX_BINDINGS; i++) {
        g_assert_cmphex(pvdc_unbind_range(&m.t, m.base + i * PAGE, PAGE), ==,
                        PVDC_BIND_OK);
    }
    g_assert_cmpuint(pvdc_mem_bindings(&m), ==, 0);

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
    g_assert_cmpuint(pvdc_mem_bindings(&m), ==, 1);
    pvdc_mem_stop(&m);
}

/* A reset unmaps and forgets every binding and clears the registers. */
static void test_reset_drops_every_binding(void)
{
    PVDCMem m;

    pvdc_mem_start(&m);
    g_assert_cmphex(pvdc_mem_bind_scattered(&m, m.base), ==, PVDC_BIND_OK);
    g_assert_cmphex(pvdc_mem_bind_scattered(&m, m.base + BUF_PAGES * PAGE), ==,
                    PVDC_BIND_OK);
    g_assert_cmphex(pvdc_unbind_range(&m.t, m.base, PAGE), ==,
                    PVDC_BIND_ERR_NOT_BOUND);
    qtest_system_reset(m.t.qts);
    pvdc_test_detach(&m.t);
    pvdc_test_attach(&m.t, m.t.qts);
    g_assert_cmpuint(pvdc_mem_bindings(&m), ==, 0);
    g_assert_cmphex(pvdc_rd(&m.t, PVDC_REG_BIND_STATUS), ==, PVDC_BIND_OK);
    g_assert_cmphex(pvdc_rd(&m.t, PVDC_REG_BIND_ADDR), ==, 0);
    g_assert_cmphex(pvdc_rd(&m.t, PVDC_REG_BIND_ENTRIES), ==, 0);
    g_assert_cmphex(pvdc_unbind_range(&m.t, m.base, BUF_PAGES * PAGE), ==,
                    PVDC_BIND_ERR_NOT_BOUND);
    g_assert_cmphex(pvdc_mem_bind_scattered(&m, m.base + BUF_PAGES * PAGE), ==,
                    PVDC_BIND_OK);
    pvdc_mem_stop(&m);
}

/*
 * The bindings come along, with the entries read at BIND: the table
 * rewritten since, with entries that would be refused, changes nothing.
 */
static void test_bindings_come_along(void)
{
    uint64_t garbage[2 * BUF_PAGES];
    PVDCTest dst;
    PVDCMem m;

    pvdc_mem_start(&m);
    g_assert_cmphex(pvdc_mem_bind_scattered(&m, m.base), ==, PVDC_BIND_OK);
    g_assert_cmphex(pvdc_mem_bind_one(&m, 0xfffff000, PAGE, RAM_SIZE - PAGE,
                                      PAGE), ==, PVDC_BIND_OK);
    for (int i = 0; i < 2 * BUF_PAGES; i++) {
        garbage[i] = i % 2 ? 1 : m.t.mmio.addr;
    }
    pvdc_write_bind_table(&m.t, m.table, garbage, BUF_PAGES);
    pvdc_wr(&m.t, PVDC_REG_BIND_ENTRIES, 7);
    pvdc_wr(&m.t, PVDC_REG_DAMAGE_ADDR, 0x12345678);

    pvdc_test_migrate(&m.t, &dst, MEM_PROPS, MEM_EXTRA);
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
    pvdc_mem_stop(&m);
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
    return g_test_run();
}
