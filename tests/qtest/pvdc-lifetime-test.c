/*
 * QTest cases for pvdc over the life of a machine: uptimes long enough to
 * wrap every 32-bit count (2^32 frames), and the end of the device, hot
 * unplugged from a PCIe root port while it is busy.
 *
 * Time only moves through the qtest clock: jumping days or years ahead
 * costs nothing when no timer is armed in between.  The machine has no
 * i8254 (pit=off), whose 18.2 Hz timer would otherwise run for years.
 *
 * Copyright (c) 2026 The pvdc authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "hw/pci/pci_regs.h"
#include "hw/pci-host/q35.h"
#include "pvdc-qtest.h"

/* ------------------------------------------------------------------------ */
/* Uptimes past 2^32 frames                                                 */
/* ------------------------------------------------------------------------ */

typedef struct Uptime {
    const char *name;
    uint32_t w, h, htotal, vtotal, clock_khz;
} Uptime;

static const Uptime uptimes[] = {
    /* PVDC_MIN_FRAME_PERIOD_NS: 2^32 frames are 4.97 days */
    { "shortest-frame", 1, 1, 1, 1, SCALE_MS / PVDC_MIN_FRAME_PERIOD_NS },
    /* 60 Hz: 2^32 frames are 2.27 years */
    { "60hz", MODE_W, MODE_H, MODE_HTOTAL, MODE_VTOTAL,
      MODE_HTOTAL * MODE_VTOTAL * 60 / 1000 },
};

/* A machine whose only timer over years is the device's. */
#define NO_PIT              "-machine pit=off"

/* Head 0 on with @u's mode; returns its enable time. */
static int64_t uptime_enable(PVDCTest *t, const Uptime *u)
{
    pvdc_write_mode_sized(t, 0, u->w, u->h, u->htotal, u->vtotal, u->clock_khz);
    pvdc_write_plane(t, pvdc_plane_of(t, 0, PRIMARY), 0, 0, 0);
    return pvdc_commit_enable(t, 0);
}

/* The counters of head 0 at the current time, timeline @t0 + n * @period. */
static void assert_counters(PVDCTest *t, int64_t t0, uint64_t period)
{
    uint64_t n = (pvdc_now_ns(t) - t0) / period;

    g_assert_cmpuint(pvdc_head_ctl(t, 0, PVDC_HEAD_VBLANK_COUNT), ==,
                     (uint32_t)n);
    g_assert_cmpuint(pvdc_vblank_time(t, 0), ==, t0 + n * period);
}

/*
 * 2^32 frames and a few after enabling, the vblank interrupt, a CRC and a
 * commit work as on the first day: the next vblank is the next vblank, not
 * a deadline in the past that the timer chases for ever.
 */
static void uptime_check(PVDCTest *t, int64_t t0, uint64_t period)
{
    const uint32_t vblank0 = PVDC_INT(0, PVDC_INT_VBLANK);
    uint64_t callbacks;
    uint32_t crc, frame;

    assert_counters(t, t0, period);

    /* Vblank interrupts: one per frame, acknowledged, at the frame. */
    (void)pvdc_rd(t, PVDC_REG_INT_ACK);
    pvdc_wr(t, PVDC_REG_INT_ENABLE, vblank0);
    callbacks = pvdc_timer_callbacks(t);
    for (int i = 0; i < 5; i++) {
        int64_t next = pvdc_vblank_time(t, 0) + period;

        pvdc_step_to(t, next - 1);
        g_assert_cmphex(pvdc_rd(t, PVDC_REG_INT_STATUS), ==, 0);
        pvdc_step_to(t, next);
        g_assert_cmphex(pvdc_rd(t, PVDC_REG_INT_ACK), ==, vblank0);
        assert_counters(t, t0, period);
    }
    g_assert_cmpuint(pvdc_timer_callbacks(t), ==, callbacks + 5);
    pvdc_wr(t, PVDC_REG_INT_ENABLE, 0);

    /* A CRC of this very frame. */
    pvdc_wr(t, PVDC_HEAD_CONTROL(0) + PVDC_HEAD_CRC_CTRL, PVDC_CRC_CTRL_ENABLE);
    crc = pvdc_read_crc(t, 0, &frame);
    g_assert_cmpuint(frame, ==, pvdc_head_ctl(t, 0, PVDC_HEAD_VBLANK_COUNT));
    pvdc_step_to_next_vblank(t, 0);
    g_assert_cmphex(pvdc_read_crc(t, 0, &frame), ==, crc);
    g_assert_cmpuint(frame, ==, pvdc_head_ctl(t, 0, PVDC_HEAD_VBLANK_COUNT));
    pvdc_wr(t, PVDC_HEAD_CONTROL(0) + PVDC_HEAD_CRC_CTRL, 0);

    /* A commit latches exactly at the next vblank. */
    pvdc_wr_head(t, 0, PVDC_HS_BACKGROUND, pvdc_rd(t, PVDC_HEAD_ACTIVE(0) +
                                          PVDC_HS_BACKGROUND) + 1);
    pvdc_doorbell(t, 0);
    pvdc_step_to(t, pvdc_vblank_time(t, 0) + period - 1);
    g_assert_cmpuint(pvdc_head_ctl(t, 0, PVDC_HEAD_DOORBELL), ==, 1);
    pvdc_step_to(t, pvdc_now_ns(t) + 1);
    g_assert_cmpuint(pvdc_head_ctl(t, 0, PVDC_HEAD_DOORBELL), ==, 0);
    g_assert_cmphex(pvdc_head_ctl(t, 0, PVDC_HEAD_RESULT), ==,
                    PVDC_RESULT_APPLIED);
    g_assert_cmphex(pvdc_rd(t, PVDC_HEAD_ACTIVE(0) + PVDC_HS_BACKGROUND), ==,
                    pvdc_rd(t, PVDC_HEAD_SHADOW(0) + PVDC_HS_BACKGROUND));
    assert_counters(t, t0, period);
}

static void test_uptime_past_2_32_frames(const void *opaque)
{
    const Uptime *u = opaque;
    PVDCTest t, dst;
    uint64_t period;
    int64_t t0;

    pvdc_test_start_with(&t, NULL, NO_PIT);
    t0 = uptime_enable(&t, u);
    period = pvdc_head_ctl(&t, 0, PVDC_HEAD_FRAME_PERIOD);
    g_test_message("%s: %" PRIu64 " ns per frame", u->name, period);

    /* Just before and just after 2^32 frames. */
    pvdc_step_to(&t, t0 + ((1ull << 32) - 2) * period + period / 2);
    assert_counters(&t, t0, period);
    uptime_check(&t, t0, period);
    g_assert_cmpuint(pvdc_head_ctl(&t, 0, PVDC_HEAD_VBLANK_COUNT), <, 16);
    pvdc_step_to(&t, t0 + ((1ull << 32) + 7) * period + period / 3);
    uptime_check(&t, t0, period);

    /* Migrated there, the counters go on and the timer still works. */
    pvdc_test_migrate(&t, &dst, NULL, NO_PIT);
    assert_counters(&dst, t0, period);
    uptime_check(&dst, t0, period);

    pvdc_test_stop(&dst);
    pvdc_test_stop(&t);
}

/* ------------------------------------------------------------------------ */
/* Hot-unplug from a PCIe root port                                         */
/* ------------------------------------------------------------------------ */

/*
 * pvdc alone on the secondary bus of a PCIe root port with native hot-plug.
 * There is no firmware: the test numbers the bus, opens the root port's
 * memory window over what libqos allocates BARs from, and turns on
 * MMCONFIG so that a message can reach the root port's slot control.
 */
#define ROOT_PORT           QPCI_DEVFN(5, 0)
#define PVDC_BUS            1
#define ECAM_BASE           0xb0000000ull
#define WINDOW_BASE         0xe0000000u
#define WINDOW_LIMIT        0xefffffffu

typedef struct Slot {
    PVDCTest t;
    QPCIDevice *port;
    uint8_t exp_cap;
} Slot;

static void slot_start(Slot *s)
{
    QPCIDevice *mch;

    memset(s, 0, sizeof(*s));
    s->t.qts = qtest_init("-machine q35 -nodefaults "
                          "-global ICH9-LPC.acpi-pci-hotplug-with-bridge-"
                          "support=off "
                          "-device pcie-root-port,id=rp0,bus=pcie.0,"
                          "addr=05.0,chassis=1,slot=1 "
                          "-device pvdc,bus=rp0,id=pvdc0,vram-size=16M");
    s->t.bus = qpci_new_pc(s->t.qts, NULL);

    mch = qpci_device_find(s->t.bus, QPCI_DEVFN(0, 0));
    qpci_config_writel(mch, MCH_HOST_BRIDGE_PCIEXBAR,
                       ECAM_BASE | MCH_HOST_BRIDGE_PCIEXBAREN);
    qpci_config_writel(mch, MCH_HOST_BRIDGE_PCIEXBAR + 4, ECAM_BASE >> 32);
    g_free(mch);

    s->port = qpci_device_find(s->t.bus, ROOT_PORT);
    g_assert_nonnull(s->port);
    qpci_config_writeb(s->port, PCI_PRIMARY_BUS, 0);
    qpci_config_writeb(s->port, PCI_SECONDARY_BUS, PVDC_BUS);
    qpci_config_writeb(s->port, PCI_SUBORDINATE_BUS, PVDC_BUS);
    qpci_config_writew(s->port, PCI_MEMORY_BASE, WINDOW_BASE >> 16);
    qpci_config_writew(s->port, PCI_MEMORY_LIMIT, WINDOW_LIMIT >> 16);
    /* no prefetchable window: base above limit */
    qpci_config_writew(s->port, PCI_PREF_MEMORY_BASE, 0xfff0);
    qpci_config_writew(s->port, PCI_PREF_MEMORY_LIMIT, 0);
    qpci_config_writew(s->port, PCI_COMMAND,
                       PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER);
    s->exp_cap = qpci_find_capability(s->port, PCI_CAP_ID_EXP, 0);
    g_assert_cmpuint(s->exp_cap, !=, 0);

    /* libqos encodes the bus above the devfn in its config accesses */
    s->t.dev = qpci_device_find(s->t.bus, PVDC_BUS << 8 | QPCI_DEVFN(0, 0));
    g_assert_nonnull(s->t.dev);
    pvdc_test_map(&s->t);
    g_assert_cmpuint(s->t.mmio.addr, >=, WINDOW_BASE);
    g_assert_cmpuint(s->t.vram.addr + s->t.vram_size - 1, <=, WINDOW_LIMIT);
    g_assert_cmphex(pvdc_rd(&s->t, PVDC_REG_ID), ==, PVDC_ID);
    s->t.now = qtest_clock_step(s->t.qts, 1);
}

static void slot_stop(Slot *s)
{
    g_free(s->port);
    pvdc_test_stop(&s->t);
}

/* Where MMCONFIG shows the root port's slot control register. */
static uint64_t slot_control_addr(Slot *s)
{
    uint64_t addr = ECAM_BASE + ((uint64_t)ROOT_PORT << 12) + s->exp_cap +
                    PCI_EXP_SLTCTL;

    g_assert_cmpuint(addr % 4, ==, 0);
    return addr;
}

/* What a guest writes to the slot control register to power it off. */
#define SLOT_POWER_OFF      (PCI_EXP_SLTCTL_PCC | PCI_EXP_SLTCTL_PWR_IND_OFF)

/* Aim the device's MSI at the root port: its message unplugs it. */
static void aim_msi_at_slot_control(Slot *s)
{
    QPCIDevice *dev = s->t.dev;
    uint8_t cap = qpci_find_capability(dev, PCI_CAP_ID_MSI, 0);
    uint64_t addr = slot_control_addr(s);

    g_assert_cmpuint(cap, !=, 0);
    qpci_config_writel(dev, cap + PCI_MSI_ADDRESS_LO, (uint32_t)addr);
    qpci_config_writel(dev, cap + PCI_MSI_ADDRESS_HI, addr >> 32);
    qpci_config_writew(dev, cap + PCI_MSI_DATA_64, SLOT_POWER_OFF);
    qpci_config_writew(dev, cap + PCI_MSI_FLAGS,
                       qpci_config_readw(dev, cap + PCI_MSI_FLAGS) |
                       PCI_MSI_FLAGS_ENABLE);
}

static bool pvdc_present(QTestState *qts)
{
    QDict *rsp = qtest_qmp(qts, "{ 'execute': 'qom-get', 'arguments': "
                           "{ 'path': %s, 'property': 'type' } }",
                           PVDC_QOM_PATH);
    bool present = qdict_haskey(rsp, "return");

    qobject_unref(rsp);
    return present;
}

/* Everything that keeps the device's timer armed, on two heads. */
static void slot_make_busy(Slot *s)
{
    PVDCTest *t = &s->t;

    pvdc_enable_head(t, 0, CLOCK_1MS);
    pvdc_enable_head(t, 1, CLOCK_2MS);
    pvdc_wr(t, PVDC_HEAD_CONTROL(0) + PVDC_HEAD_CRC_CTRL, PVDC_CRC_CTRL_ENABLE);
    pvdc_wr(t, PVDC_HEAD_CONTROL(1) + PVDC_HEAD_CRC_CTRL, PVDC_CRC_CTRL_ENABLE);
    (void)pvdc_head_ctl(t, 0, PVDC_HEAD_CRC_VALUE);
    (void)pvdc_rd(t, PVDC_REG_INT_ACK);
}

/*
 * The device is gone and the machine goes on: writes to where its
 * registers were, time passing (any timer of a dead device would fire),
 * QMP answering.
 */
static void assert_unplugged(Slot *s)
{
    PVDCTest *t = &s->t;

    g_assert_false(pvdc_present(t->qts));
    for (int i = 0; i < 100; i++) {
        pvdc_wr(t, PVDC_HEAD_CONTROL(i % 2) + PVDC_HEAD_DOORBELL, 1);
        pvdc_wr(t, PVDC_REG_INT_ENABLE, UINT32_MAX);
        pvdc_wr(t, PVDC_HEAD_CONTROL(0) + PVDC_HEAD_CRC_CTRL, 1);
        pvdc_step_to(t, t->now + PERIOD_1MS / 3);
    }
    pvdc_step_to(t, t->now + NANOSECONDS_PER_SECOND);
    qtest_qmp_assert_success(t->qts, "{ 'execute': 'query-status' }");
}

/*
 * The commit-done message of a latch, sent from the device's timer,
 * powers the slot off: the device is unrealized in the middle of its own
 * callback, which must not touch what unrealize released afterwards.
 */
static void test_unplug_inside_own_timer_interrupt(void)
{
    Slot s;

    slot_start(&s);
    slot_make_busy(&s);
    aim_msi_at_slot_control(&s);
    pvdc_wr(&s.t, PVDC_REG_INT_ENABLE, PVDC_INT(0, PVDC_INT_COMMIT_DONE) |
            PVDC_INT(1, PVDC_INT_COMMIT_DONE) | PVDC_INT(1, PVDC_INT_VBLANK));
    pvdc_wr_head(&s.t, 0, PVDC_HS_BACKGROUND, 0x123456);
    pvdc_wr(&s.t, PVDC_REG_MULTI_DOORBELL, BIT(0) | BIT(1));
    g_assert_true(pvdc_present(s.t.qts));

    /* The latch, and its messages, at the later of the heads' vblanks. */
    pvdc_step_to(&s.t, s.t.now + 2 * PERIOD_1MS);
    assert_unplugged(&s);
    slot_stop(&s);
}

/*
 * Enabling a pending interrupt sends the message from inside the register
 * write: the device is unrealized before the write returns.
 */
static void test_unplug_inside_register_write(void)
{
    Slot s;

    slot_start(&s);
    slot_make_busy(&s);
    pvdc_wr(&s.t, PVDC_REG_INT_ENABLE, 0);
    aim_msi_at_slot_control(&s);
    pvdc_wr_head(&s.t, 1, PVDC_HS_BACKGROUND, 0x654321);
    g_assert_cmphex(pvdc_commit(&s.t, 1), ==, PVDC_RESULT_APPLIED);
    g_assert_cmphex(pvdc_rd(&s.t, PVDC_REG_INT_STATUS), ==,
                    PVDC_INT(1, PVDC_INT_COMMIT_DONE));
    pvdc_doorbell(&s.t, 0);

    pvdc_wr(&s.t, PVDC_REG_INT_ENABLE, PVDC_INT(1, PVDC_INT_COMMIT_DONE) |
            PVDC_INT(0, PVDC_INT_VBLANK));
    assert_unplugged(&s);
    slot_stop(&s);
}

/*
 * The guest powers the slot off, as after an attention button press,
 * while the device has a commit armed, interrupts and CRCs running and its
 * registers are being written.
 */
static void test_unplug_while_busy(void)
{
    Slot s;

    slot_start(&s);
    slot_make_busy(&s);
    pvdc_wr(&s.t, PVDC_REG_INT_ENABLE, PVDC_INT(0, PVDC_INT_VBLANK) |
            PVDC_INT(1, PVDC_INT_VBLANK));
    pvdc_doorbell(&s.t, 1);
    pvdc_step_to(&s.t, s.t.now + PERIOD_1MS / 2);
    pvdc_wr(&s.t, PVDC_REG_MULTI_DOORBELL, BIT(0));
    qpci_config_writew(s.port, s.exp_cap + PCI_EXP_SLTCTL, SLOT_POWER_OFF);
    assert_unplugged(&s);
    slot_stop(&s);
}

/*
 * Unplugged with guest pages bound: unrealize unmaps them (a mapping
 * left behind keeps the guest's RAM referenced, and its bookkeeping is
 * reported as a leak by LeakSanitizer in the -asan suite).
 */
static void test_unplug_with_bindings(void)
{
    const uint64_t table = 8 * MiB;
    const uint64_t entries[] = { 10 * MiB, PVDC_BIND_PAGE_SIZE,
                                 9 * MiB, 2 * PVDC_BIND_PAGE_SIZE };
    Slot s;

    slot_start(&s);
    pvdc_write_bind_table(&s.t, table, entries, 2);
    g_assert_cmphex(pvdc_bind_range(&s.t, s.t.vram_size,
                                    3 * PVDC_BIND_PAGE_SIZE, table, 2), ==,
                    PVDC_BIND_OK);
    g_assert_cmphex(pvdc_bind_range(&s.t, 0x80000000, 3 * PVDC_BIND_PAGE_SIZE,
                                    table, 2), ==, PVDC_BIND_OK);
    g_assert_cmpuint(pvdc_statistic(s.t.qts, "x-bindings"), ==, 2);
    qpci_config_writew(s.port, s.exp_cap + PCI_EXP_SLTCTL, SLOT_POWER_OFF);
    assert_unplugged(&s);
    slot_stop(&s);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);

    for (int i = 0; i < ARRAY_SIZE(uptimes); i++) {
        g_autofree char *path =
            g_strdup_printf("/pvdc/uptime/%s/2-pow-32-frames-later",
                            uptimes[i].name);

        qtest_add_data_func(path, &uptimes[i], test_uptime_past_2_32_frames);
    }
    qtest_add_func("/pvdc/unplug/inside-its-own-timer-interrupt",
                   test_unplug_inside_own_timer_interrupt);
    qtest_add_func("/pvdc/unplug/inside-a-register-write",
                   test_unplug_inside_register_write);
    qtest_add_func("/pvdc/unplug/while-busy",
                   test_unplug_while_busy);
    qtest_add_func("/pvdc/unplug/with-guest-pages-bound",
                   test_unplug_with_bindings);

    return g_test_run();
}
