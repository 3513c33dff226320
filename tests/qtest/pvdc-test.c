/*
 * QTest cases for pvdc, the paravirtual display controller.
 *
 * Copyright (c) 2026 The pvdc authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/units.h"
#include "libqtest.h"
#include "libqos/pci.h"
#include "libqos/pci-pc.h"
#include "hw/pci/pci_regs.h"
#include "hw/display/pvdc-regs.h"

typedef struct PVDCTest {
    QTestState *qts;
    QPCIBus *bus;
    QPCIDevice *dev;
    QPCIBar mmio;
    QPCIBar vram;
} PVDCTest;

static void pvdc_test_start(PVDCTest *t, const char *props)
{
    t->qts = qtest_initf("-machine q35 -nodefaults -device pvdc,addr=04.0%s%s",
                         props ? "," : "", props ? props : "");
    t->bus = qpci_new_pc(t->qts, NULL);
    t->dev = qpci_device_find(t->bus, QPCI_DEVFN(4, 0));
    g_assert_nonnull(t->dev);
    qpci_device_enable(t->dev);
    t->mmio = qpci_iomap(t->dev, PVDC_MMIO_BAR, NULL);
    t->vram = qpci_iomap(t->dev, PVDC_VRAM_BAR, NULL);
}

static void pvdc_test_stop(PVDCTest *t)
{
    g_free(t->dev);
    qpci_free_pc(t->bus);
    qtest_quit(t->qts);
}

static uint32_t rd(PVDCTest *t, uint64_t reg)
{
    return qpci_io_readl(t->dev, t->mmio, reg);
}

static void test_pci_identity(void)
{
    PVDCTest t;

    pvdc_test_start(&t, NULL);
    g_assert_cmphex(qpci_config_readw(t.dev, PCI_VENDOR_ID), ==,
                    PVDC_PCI_VENDOR_ID);
    g_assert_cmphex(qpci_config_readw(t.dev, PCI_DEVICE_ID), ==,
                    PVDC_PCI_DEVICE_ID);
    g_assert_cmphex(rd(&t, PVDC_REG_ID), ==, PVDC_ID);
    g_assert_cmphex(rd(&t, PVDC_REG_VERSION), ==,
                    (PVDC_VERSION_MAJOR << 16) | PVDC_VERSION_MINOR);
    pvdc_test_stop(&t);
}

static void test_capabilities_follow_properties(void)
{
    static const struct {
        const char *props;
        uint32_t heads, overlays, scalers;
        uint64_t vram;
    } cases[] = {
        { NULL, 2, 3, 2, 64 * MiB },
        { "heads=1,overlays=0,scalers=0,vram-size=16M", 1, 0, 0, 16 * MiB },
        { "heads=8,overlays=8,scalers=4,vram-size=256M", 8, 8, 4, 256 * MiB },
    };

    for (int i = 0; i < ARRAY_SIZE(cases); i++) {
        PVDCTest t;

        pvdc_test_start(&t, cases[i].props);
        g_assert_cmpuint(rd(&t, PVDC_REG_NUM_HEADS), ==, cases[i].heads);
        g_assert_cmpuint(rd(&t, PVDC_REG_NUM_OVERLAYS), ==, cases[i].overlays);
        g_assert_cmpuint(rd(&t, PVDC_REG_NUM_PLANES), ==,
                         cases[i].heads * (cases[i].overlays + 2));
        g_assert_cmpuint(rd(&t, PVDC_REG_NUM_SCALERS), ==, cases[i].scalers);
        g_assert_cmpuint(rd(&t, PVDC_REG_VRAM_SIZE_LO) |
                         (uint64_t)rd(&t, PVDC_REG_VRAM_SIZE_HI) << 32, ==,
                         cases[i].vram);
        pvdc_test_stop(&t);
    }
}

static void test_vram_bar_is_memory(void)
{
    PVDCTest t;

    pvdc_test_start(&t, NULL);
    qpci_io_writel(t.dev, t.vram, 0x1000, 0xdeadbeef);
    g_assert_cmphex(qpci_io_readl(t.dev, t.vram, 0x1000), ==, 0xdeadbeef);
    pvdc_test_stop(&t);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    qtest_add_func("/pvdc/pci/identity", test_pci_identity);
    qtest_add_func("/pvdc/caps/follow-properties",
                   test_capabilities_follow_properties);
    qtest_add_func("/pvdc/vram/bar-is-memory", test_vram_bar_is_memory);
    return g_test_run();
}
