/*
 * The pvdc memory qtest library: guest pages, BIND tables and bindings
 * (pvdc-qtest-memory.h says what each helper does).
 *
 * Copyright (c) 2026 The pvdc authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "pvdc-qtest-memory.h"

void pvdc_mem_start_props(PVDCMem *m, const char *props, const char *extra)
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

void pvdc_mem_start_with(PVDCMem *m, const char *extra)
{
    pvdc_mem_start_props(m, MEM_PROPS, extra);
}

void pvdc_mem_start(PVDCMem *m)
{
    pvdc_mem_start_with(m, MEM_EXTRA);
}

void pvdc_mem_stop(PVDCMem *m)
{
    alloc_destroy(&m->alloc);
    pvdc_test_stop(&m->t);
}

uint32_t pvdc_mem_bindings(PVDCMem *m)
{
    return pvdc_statistic(m->t.qts, "x-bindings");
}

uint32_t pvdc_mem_bind_scattered(PVDCMem *m, uint32_t addr)
{
    uint64_t e[2 * BUF_PAGES];

    for (int i = 0; i < BUF_PAGES; i++) {
        e[2 * i] = m->pages[BUF_PAGES - 1 - i];
        e[2 * i + 1] = PAGE;
    }
    pvdc_write_bind_table(&m->t, m->table, e, BUF_PAGES);
    return pvdc_bind_range(&m->t, addr, BUF_PAGES * PAGE, m->table, BUF_PAGES);
}

uint32_t pvdc_mem_bind_one(PVDCMem *m, uint32_t addr, uint32_t size,
                           uint64_t entry_addr, uint64_t entry_len)
{
    uint64_t e[2] = { entry_addr, entry_len };

    pvdc_write_bind_table(&m->t, m->table, e, 1);
    return pvdc_bind_range(&m->t, addr, size, m->table, 1);
}

void pvdc_set_bus_master(PVDCTest *t, bool on)
{
    uint16_t cmd = qpci_config_readw(t->dev, PCI_COMMAND);

    cmd = on ? cmd | PCI_COMMAND_MASTER : cmd & ~PCI_COMMAND_MASTER;
    qpci_config_writew(t->dev, PCI_COMMAND, cmd);
}

uint64_t pvdc_mem_page_of(PVDCMem *m, int first, int n, uint32_t rel)
{
    return m->pages[first + n - 1 - rel / PAGE] + rel % PAGE;
}

uint32_t pvdc_mem_bind_pages(PVDCMem *m, uint32_t addr, int first, int n)
{
    uint64_t e[2 * BUF_PAGES];

    for (int i = 0; i < n; i++) {
        e[2 * i] = pvdc_mem_page_of(m, first, n, i * PAGE);
        e[2 * i + 1] = PAGE;
    }
    pvdc_write_bind_table(&m->t, m->table, e, n);
    return pvdc_bind_range(&m->t, addr, n * PAGE, m->table, n);
}

void pvdc_damage(PVDCTest *t, uint32_t addr, uint32_t len)
{
    pvdc_wr(t, PVDC_REG_DAMAGE_ADDR, addr);
    pvdc_wr(t, PVDC_REG_DAMAGE_LEN, len);
}

uint32_t pvdc_crc_now(PVDCTest *t)
{
    uint32_t frame;

    return pvdc_read_crc(t, 0, &frame);
}

uint32_t pvdc_mem_background_crc(void)
{
    uint32_t pixels[MODE_W * MODE_H];

    for (int i = 0; i < ARRAY_SIZE(pixels); i++) {
        pixels[i] = MEM_BACKGROUND;
    }
    return pvdc_frame_crc(pixels, ARRAY_SIZE(pixels));
}

void pvdc_mem_assert_shows(PVDCTest *t, const uint8_t *fb)
{
    g_autofree uint32_t *shown = pvdc_screendump_mode(t->qts, 0);

    for (int i = 0; i < MODE_W * MODE_H; i++) {
        g_assert_cmphex(shown[i], ==, ldl_le_p(fb + i * 4) & 0xffffff);
    }
}

void pvdc_mem_assert_background(PVDCTest *t)
{
    g_autofree uint32_t *shown = pvdc_screendump_mode(t->qts, 0);

    for (int i = 0; i < MODE_W * MODE_H; i++) {
        g_assert_cmphex(shown[i], ==, MEM_BACKGROUND);
    }
}
