/*
 * QTest cases for pvdc against guests that ask for more than the host
 * should give: interrupt messages that re-enter the device, and storms of
 * vblanks, interrupts, doorbells and host CPU work, one test per class
 * (the register and layout values of hostile guests are pvdc-hostile-test's):
 *
 *   msi-into-own-bar        CVE-2024-3446 (DMA/MMIO re-entrancy)
 *   vblank and doorbell     interrupt storms: vblanks every nanosecond
 *   storms                  never acknowledged, thousands of doorbells,
 *                           eight heads at the shortest frame
 *   host CPU                CRC capture and damage tracking as costly as a
 *                           guest can make them
 *
 * Each case checks that the device stays responsive (registers read
 * back, a later valid commit applies) and that what it does for the guest
 * is bounded by the device, not by the guest.
 *
 * Time only moves through the qtest clock.
 *
 * Copyright (c) 2026 The pvdc authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "hw/pci/pci_regs.h"
#include "pvdc-qtest.h"

/* ------------------------------------------------------------------------ */
/* CVE-2024-3446: an interrupt message that re-enters the device           */
/* ------------------------------------------------------------------------ */

#define MSI_RAM     0x100000

static void msi_aim(PVDCTest *t, uint64_t addr, uint16_t data)
{
    uint8_t cap = qpci_find_capability(t->dev, PCI_CAP_ID_MSI, 0);

    g_assert_cmpuint(cap, !=, 0);
    qpci_config_writel(t->dev, cap + PCI_MSI_ADDRESS_LO, (uint32_t)addr);
    qpci_config_writel(t->dev, cap + PCI_MSI_ADDRESS_HI, addr >> 32);
    qpci_config_writew(t->dev, cap + PCI_MSI_DATA_64, data);
    qpci_config_writew(t->dev, cap + PCI_MSI_FLAGS,
                       qpci_config_readw(t->dev, cap + PCI_MSI_FLAGS) |
                       PCI_MSI_FLAGS_ENABLE);
}

/*
 * Aim the device's messages at register @reg with @data, make it send
 * some from every place it does (a latch at a vblank, a register write
 * enabling a pending bit, vblank interrupts): none reaches the registers.
 */
static void messages_into_own_register(PVDCTest *t, uint32_t reg,
                                       uint16_t data,
                                       const PVDCSnapshot *before)
{
    const uint32_t done0 = PVDC_INT(0, PVDC_INT_COMMIT_DONE);
    const uint32_t vblank0 = PVDC_INT(0, PVDC_INT_VBLANK);
    uint32_t seq0 = pvdc_head_ctl(t, 0, PVDC_HEAD_ARMED_SEQ);
    uint32_t seq1 = pvdc_head_ctl(t, 1, PVDC_HEAD_ARMED_SEQ);
    PVDCSnapshot shadow_before, shadow_after;

    pvdc_snapshot_shadow(t, &shadow_before);
    msi_aim(t, t->mmio.addr + reg, data);

    /* From the timer: a commit latched at a vblank. */
    pvdc_wr(t, PVDC_REG_INT_ENABLE, done0);
    pvdc_doorbell(t, 0);
    g_assert_cmphex(pvdc_wait_outcome(t, 0, 2 * PERIOD_1MS), ==,
                    PVDC_RESULT_APPLIED);
    g_assert_cmphex(pvdc_rd(t, PVDC_REG_INT_ENABLE), ==, done0);
    g_assert_cmphex(pvdc_rd(t, PVDC_REG_MULTI_DOORBELL), ==, 0);
    g_assert_cmphex(pvdc_rd(t, PVDC_REG_INT_STATUS) & done0, ==, done0);

    /* From a register write: enabling a pending bit sends a message. */
    pvdc_wr(t, PVDC_REG_INT_ENABLE, 0);
    pvdc_step_to(t, t->now + PERIOD_1MS);
    pvdc_wr(t, PVDC_REG_INT_ENABLE, done0 | vblank0);
    g_assert_cmphex(pvdc_rd(t, PVDC_REG_INT_ENABLE), ==, done0 | vblank0);
    /* And from the vblank interrupt, at the next vblanks. */
    (void)pvdc_rd(t, PVDC_REG_INT_ACK);
    pvdc_step_next(t);
    (void)pvdc_rd(t, PVDC_REG_INT_ACK);
    pvdc_step_next(t);
    g_assert_cmphex(pvdc_rd(t, PVDC_REG_INT_ENABLE), ==, done0 | vblank0);
    pvdc_wr(t, PVDC_REG_INT_ENABLE, 0);
    (void)pvdc_rd(t, PVDC_REG_INT_ACK);

    /* No message changed anything. */
    g_assert_cmpuint(pvdc_head_ctl(t, 0, PVDC_HEAD_ARMED_SEQ), ==, seq0 + 1);
    g_assert_cmpuint(pvdc_head_ctl(t, 1, PVDC_HEAD_ARMED_SEQ), ==, seq1);
    g_assert_cmphex(pvdc_head_ctl(t, 0, PVDC_HEAD_CRC_CTRL), ==, 0);
    g_assert_cmphex(pvdc_head_ctl(t, 0, PVDC_HEAD_STATUS), ==, 0);
    pvdc_snapshot_shadow(t, &shadow_after);
    g_assert(memcmp(&shadow_after, &shadow_before,
                    sizeof(shadow_after)) == 0);
    pvdc_assert_active_is(t, before);
}

static void test_msi_into_own_bar_does_not_reenter(void)
{
    /* Registers a message could hit, and what it would write. */
    static const struct {
        uint32_t reg;
        uint16_t data;
    } targets[] = {
        { PVDC_REG_INT_ENABLE, 0xffff },
        { PVDC_REG_INT_ENABLE, 0 },
        { PVDC_REG_INT_STATUS, 0xffff },
        { PVDC_REG_INT_ACK, 0xffff },
        { PVDC_REG_MULTI_DOORBELL, 0x3 },
        { PVDC_HEAD_CONTROL(0) + PVDC_HEAD_DOORBELL, 1 },
        { PVDC_HEAD_CONTROL(1) + PVDC_HEAD_DOORBELL, 1 },
        { PVDC_HEAD_CONTROL(0) + PVDC_HEAD_CRC_CTRL, 1 },
        { PVDC_HEAD_CONTROL(0) + PVDC_HEAD_STATUS, 0xffff },
        { PVDC_HEAD_SHADOW(0) + PVDC_HS_CTRL, 0 },
        { PVDC_PLANE_SHADOW(0) + PVDC_PS_FB_OFFSET, 0x40 },
        { PVDC_PLANE_SHADOW(0) + PVDC_PS_CTRL, 0 },
    };
    const uint32_t done0 = PVDC_INT(0, PVDC_INT_COMMIT_DONE);
    PVDCSnapshot before;
    PVDCTest t;

    pvdc_test_start(&t, NULL);
    pvdc_enable_good_head0(&t);
    (void)pvdc_rd(&t, PVDC_REG_INT_ACK);
    pvdc_snapshot_active(&t, &before);

    for (int i = 0; i < ARRAY_SIZE(targets); i++) {
        messages_into_own_register(&t, targets[i].reg, targets[i].data,
                                   &before);
    }

    /* Messages into VRAM are plain memory writes. */
    msi_aim(&t, t.vram.addr + 4 * KiB, 0xbeef);
    pvdc_wr(&t, PVDC_REG_INT_ENABLE, done0);
    g_assert_cmphex(pvdc_commit(&t, 0), ==, PVDC_RESULT_APPLIED);
    g_assert_cmphex(qtest_readl(t.qts, t.vram.addr + 4 * KiB), ==, 0xbeef);
    pvdc_wr(&t, PVDC_REG_INT_ENABLE, 0);

    /* Back to plain RAM: messages arrive again. */
    qtest_writel(t.qts, MSI_RAM, 0);
    msi_aim(&t, MSI_RAM, 0x4321);
    (void)pvdc_rd(&t, PVDC_REG_INT_ACK);
    pvdc_wr(&t, PVDC_REG_INT_ENABLE, done0);
    g_assert_cmphex(pvdc_commit(&t, 0), ==, PVDC_RESULT_APPLIED);
    g_assert_cmphex(qtest_readl(t.qts, MSI_RAM), ==, 0x4321);
    pvdc_assert_still_works(&t, &before);
    pvdc_test_stop(&t);
}

/* ------------------------------------------------------------------------ */
/* Interrupt and doorbell storms                                            */
/* ------------------------------------------------------------------------ */

/*
 * The fastest mode the device accepts: a 1x1 frame of PVDC_MIN_FRAME_PERIOD_NS
 * (a one-nanosecond frame is refused, see the next test).  With its vblank
 * interrupt enabled and never acknowledged, the device costs at most one
 * timer callback per vblank and sends one message; the rest of the device
 * keeps working.
 */
static void test_vblank_storm_keeps_the_device_responsive(void)
{
    const uint32_t vblank1 = PVDC_INT(1, PVDC_INT_VBLANK);
    const int64_t period = PVDC_MIN_FRAME_PERIOD_NS;
    const int64_t span = 100 * period;
    uint64_t cb0, cb;
    uint32_t count0, count;
    PVDCSnapshot before;
    PVDCTest t;
    int messages = 0;

    pvdc_test_start(&t, NULL);
    pvdc_enable_good_head0(&t);
    /* 1 pixel per frame: the clock in kHz is 10^6 / period in ns. */
    pvdc_write_mode_sized(&t, 1, 1, 1, 1, 1, SCALE_MS / period);
    g_assert_cmphex(pvdc_commit(&t, 1), ==, PVDC_RESULT_APPLIED);
    g_assert_cmpuint(pvdc_head_ctl(&t, 1, PVDC_HEAD_FRAME_PERIOD), ==, period);
    pvdc_snapshot_active(&t, &before);

    qtest_writel(t.qts, MSI_RAM, 0);
    msi_aim(&t, MSI_RAM, 0x4321);
    cb0 = pvdc_timer_callbacks(&t);
    count0 = pvdc_head_ctl(&t, 1, PVDC_HEAD_VBLANK_COUNT);
    pvdc_wr(&t, PVDC_REG_INT_ENABLE, vblank1);
    pvdc_step_to(&t, t.now + span);
    cb = pvdc_timer_callbacks(&t) - cb0;
    count = pvdc_head_ctl(&t, 1, PVDC_HEAD_VBLANK_COUNT) - count0;
    g_test_message("%" PRIu64 " timer callbacks for %u vblanks in %" PRId64
                   " ns", cb, count, span);
    g_assert_cmpuint(count, >=, span / period - 1);
    g_assert_cmpuint(cb, <=, count + 1);
    g_assert_cmphex(pvdc_rd(&t, PVDC_REG_INT_STATUS) & vblank1, ==, vblank1);
    if (qtest_readl(t.qts, MSI_RAM) == 0x4321) {
        messages++;
        qtest_writel(t.qts, MSI_RAM, 0);
    }
    g_assert_cmpint(messages, ==, 1);

    /* Still answering, and the other head still flips. */
    pvdc_wr(&t, PVDC_REG_INT_ENABLE, 0);
    pvdc_assert_still_works(&t, &before);

    /* Acknowledged each time: one message per vblank, no more. */
    pvdc_wr(&t, PVDC_REG_INT_ENABLE, vblank1);
    (void)pvdc_rd(&t, PVDC_REG_INT_ACK);
    qtest_writel(t.qts, MSI_RAM, 0);
    for (int i = 0; i < 1000; i++) {
        pvdc_step_to(&t, t.now + period);
        g_assert_cmphex(pvdc_rd(&t, PVDC_REG_INT_ACK) & vblank1, ==, vblank1);
        g_assert_cmphex(qtest_readl(t.qts, MSI_RAM), ==, 0x4321);
        qtest_writel(t.qts, MSI_RAM, 0);
    }
    pvdc_wr(&t, PVDC_REG_INT_ENABLE, 0);
    /* The storm stops with the interrupt: no timer any more. */
    cb0 = pvdc_timer_callbacks(&t);
    pvdc_step_to(&t, t.now + span);
    g_assert_cmpuint(pvdc_timer_callbacks(&t), ==, cb0);
    pvdc_test_stop(&t);
}

/*
 * Reproducer: the same storm must not cost the host a timer callback per
 * vblank.  While the VBLANK status bit is set and not acknowledged, a new
 * vblank changes nothing the guest can see, so the device has no reason
 * to run its timer; and no display needs more than 10000 vblanks a second.
 * Either way a guest must not be able to make the device run its timer
 * more than once per 100 us of virtual time.  (In a running VM the virtual
 * clock follows the host's: 1 ns frames otherwise keep the main loop busy
 * with back-to-back callbacks, and QMP stops answering.)
 */
static void test_unacknowledged_vblank_storm_is_rate_limited(void)
{
    const int64_t span = 100 * SCALE_US;
    uint32_t result;
    uint64_t cb0, cb;
    PVDCSnapshot before;
    PVDCTest t;

    pvdc_test_start(&t, NULL);
    pvdc_enable_good_head0(&t);
    pvdc_write_mode_sized(&t, 1, 1, 1, 1, 1, 1000000);
    result = pvdc_commit(&t, 1);
    if (result != PVDC_RESULT_APPLIED) {
        /* Refusing such a mode is the other way out. */
        g_assert_cmphex(result, ==, pvdc_head_result(PVDC_ERR_MODE));
    }
    pvdc_snapshot_active(&t, &before);

    pvdc_wr(&t, PVDC_REG_INT_ENABLE, PVDC_INT(1, PVDC_INT_VBLANK));
    cb0 = pvdc_timer_callbacks(&t);
    pvdc_step_to(&t, t.now + span);
    cb = pvdc_timer_callbacks(&t) - cb0;
    g_test_message("%" PRIu64 " timer callbacks in %" PRId64 " ns with the "
                   "vblank interrupt pending", cb, span);
    g_assert_cmpuint(cb, <=, 2);

    pvdc_wr(&t, PVDC_REG_INT_ENABLE, 0);
    pvdc_assert_still_works(&t, &before);
    pvdc_test_stop(&t);
}

static void test_doorbell_storms_are_absorbed(void)
{
    const int storm = 5000;
    unsigned int primary;
    uint32_t seq;
    PVDCSnapshot before;
    PVDCTest t;
    uint64_t cb;

    pvdc_test_start(&t, NULL);
    primary = pvdc_plane_of(&t, 0, PRIMARY);
    pvdc_enable_good_head0(&t);
    pvdc_snapshot_active(&t, &before);

    /* Thousands of doorbells on an armed head: one commit, overruns. */
    seq = pvdc_head_ctl(&t, 0, PVDC_HEAD_ARMED_SEQ);
    cb = pvdc_timer_callbacks(&t);
    pvdc_wr_plane(&t, primary, PVDC_PS_FB_OFFSET, PVDC_FLIP_OFFSET);
    for (int i = 0; i < storm; i++) {
        pvdc_doorbell(&t, 0);
    }
    g_assert_cmpuint(pvdc_head_ctl(&t, 0, PVDC_HEAD_ARMED_SEQ), ==, seq + 1);
    g_assert_cmphex(pvdc_head_ctl(&t, 0, PVDC_HEAD_STATUS), ==,
                    PVDC_HEAD_STATUS_DOORBELL_OVERRUN);
    g_assert_cmphex(pvdc_wait_outcome(&t, 0, 2 * PERIOD_1MS), ==,
                    PVDC_RESULT_APPLIED);
    g_assert_cmpuint(pvdc_timer_callbacks(&t), ==, cb + 1);
    pvdc_wr(&t, PVDC_HEAD_CONTROL(0) + PVDC_HEAD_STATUS,
            PVDC_HEAD_STATUS_DOORBELL_OVERRUN);
    pvdc_wr_plane(&t, primary, PVDC_PS_FB_OFFSET, PVDC_GOOD_OFFSET);
    g_assert_cmphex(pvdc_commit(&t, 0), ==, PVDC_RESULT_APPLIED);
    pvdc_assert_active_is(&t, &before);

    /* Multi-head doorbells naming heads that do not exist: ignored. */
    for (int i = 0; i < storm; i++) {
        pvdc_wr(&t, PVDC_REG_MULTI_DOORBELL, 0xffffffff - (i & 0xff));
    }
    g_assert_cmphex(pvdc_rd(&t, PVDC_REG_MULTI_DOORBELL), ==, 0);
    g_assert_cmpuint(pvdc_head_ctl(&t, 0, PVDC_HEAD_ARMED_SEQ), ==, seq + 2);

    /* A multi-doorbell storm on existing heads: one group, overruns. */
    seq = pvdc_head_ctl(&t, 1, PVDC_HEAD_ARMED_SEQ);
    for (int i = 0; i < storm; i++) {
        pvdc_wr(&t, PVDC_REG_MULTI_DOORBELL, MAKE_64BIT_MASK(0, t.heads));
    }
    g_assert_cmpuint(pvdc_head_ctl(&t, 1, PVDC_HEAD_ARMED_SEQ), ==, seq + 1);
    g_assert_cmphex(pvdc_wait_outcome(&t, 0, 2 * PERIOD_1MS), ==,
                    PVDC_RESULT_APPLIED);
    g_assert_cmphex(pvdc_head_ctl(&t, 1, PVDC_HEAD_RESULT), ==,
                    PVDC_RESULT_APPLIED);
    pvdc_wr(&t, PVDC_HEAD_CONTROL(0) + PVDC_HEAD_STATUS, UINT32_MAX);
    pvdc_wr(&t, PVDC_HEAD_CONTROL(1) + PVDC_HEAD_STATUS, UINT32_MAX);

    /* Commits to a disabled head latch at once, one after the other. */
    seq = pvdc_head_ctl(&t, 1, PVDC_HEAD_ARMED_SEQ);
    for (int i = 0; i < 1000; i++) {
        pvdc_doorbell(&t, 1);
        g_assert_cmphex(pvdc_wait_outcome(&t, 1, 0), ==, PVDC_RESULT_APPLIED);
    }
    g_assert_cmpuint(pvdc_head_ctl(&t, 1, PVDC_HEAD_ARMED_SEQ), ==, seq + 1000);
    g_assert_cmpuint(pvdc_head_ctl(&t, 1, PVDC_HEAD_DONE_SEQ), ==, seq + 1000);
    g_assert_cmphex(pvdc_head_ctl(&t, 1, PVDC_HEAD_STATUS), ==, 0);

    /* Interrupts raised by all that, acknowledged in one read. */
    g_assert_cmphex(pvdc_rd(&t, PVDC_REG_INT_ACK) &
                    PVDC_INT(1, PVDC_INT_COMMIT_DONE), !=, 0);
    g_assert_cmphex(pvdc_rd(&t, PVDC_REG_INT_STATUS), ==, 0);
    pvdc_snapshot_active(&t, &before);
    pvdc_assert_still_works(&t, &before);
    pvdc_test_stop(&t);
}

/*
 * Eight heads at the shortest frame, their vblanks staggered 12.5 us apart,
 * every vblank interrupt acknowledged as soon as it arrives: the device's
 * timer still runs at most once per PVDC_MIN_FRAME_PERIOD_NS, all heads
 * together, and no vblank is lost from the counters.
 */
static void test_timer_rate_is_bounded_device_wide(void)
{
    const int64_t period = PVDC_MIN_FRAME_PERIOD_NS;
    const int64_t step = period / 8, span = 100 * period;
    uint32_t all_vblanks = 0, seen = 0;
    int64_t t0[8], start;
    uint64_t cb0, cb;
    PVDCTest t;

    pvdc_test_start(&t, "heads=8,overlays=0,vram-size=16M");
    for (unsigned int h = 0; h < t.heads; h++) {
        pvdc_step_to(&t, t.now + step);
        pvdc_write_mode_sized(&t, h, 1, 1, 1, 1, SCALE_MS / period);
        t0[h] = pvdc_commit_enable(&t, h);
        all_vblanks |= PVDC_INT(h, PVDC_INT_VBLANK);
    }
    (void)pvdc_rd(&t, PVDC_REG_INT_ACK);
    pvdc_wr(&t, PVDC_REG_INT_ENABLE, all_vblanks);
    cb0 = pvdc_timer_callbacks(&t);
    start = t.now;
    while (t.now < start + span) {
        pvdc_step_to(&t, t.now + step);
        seen |= pvdc_rd(&t, PVDC_REG_INT_ACK);
    }
    cb = pvdc_timer_callbacks(&t) - cb0;
    g_test_message("%" PRIu64 " timer callbacks for 8 heads in %" PRId64
                   " ns", cb, span);
    g_assert_cmpuint(cb, <=, span / period + 1);
    g_assert_cmphex(seen, ==, all_vblanks);
    for (unsigned int h = 0; h < t.heads; h++) {
        g_assert_cmpuint(pvdc_head_ctl(&t, h, PVDC_HEAD_VBLANK_COUNT), ==,
                         (t.now - t0[h]) / period);
    }
    pvdc_wr(&t, PVDC_REG_INT_ENABLE, 0);
    pvdc_test_stop(&t);
}

/*
 * Eight heads at the shortest frame, enabled together so that their
 * vblanks fall at the same instants, every vblank interrupt acknowledged
 * after each frame: each run of the timer sends one message for all the
 * heads, not one per head.  The messages are aimed at a second pvdc, whose
 * x-mmio-writes counts them.
 */
static void test_interrupt_messages_are_bounded_device_wide(void)
{
    const int64_t period = PVDC_MIN_FRAME_PERIOD_NS;
    const int frames = 100;
    uint32_t all_heads = 0, all_vblanks = 0;
    uint64_t cb0, sent0, cb, sent;
    QPCIDevice *counter;
    QPCIBar bar;
    PVDCTest t;

    pvdc_test_start_with(&t, "heads=8,overlays=0,vram-size=16M",
                         "-device pvdc,addr=05.0,id=pvdc1,heads=1,"
                         "vram-size=16M");
    counter = qpci_device_find(t.bus, QPCI_DEVFN(5, 0));
    g_assert_nonnull(counter);
    qpci_device_enable(counter);
    bar = qpci_iomap(counter, PVDC_MMIO_BAR, NULL);

    for (unsigned int h = 0; h < t.heads; h++) {
        pvdc_write_mode_sized(&t, h, 1, 1, 1, 1, SCALE_MS / period);
        all_heads |= BIT(h);
        all_vblanks |= PVDC_INT(h, PVDC_INT_VBLANK);
    }
    pvdc_wr(&t, PVDC_REG_MULTI_DOORBELL, all_heads);
    pvdc_step_to(&t, t.now + period);
    g_assert_cmphex(pvdc_wait_outcome(&t, 0, 0), ==, PVDC_RESULT_APPLIED);
    (void)pvdc_rd(&t, PVDC_REG_INT_ACK);
    msi_aim(&t, bar.addr + PVDC_REG_ID, 1);
    pvdc_wr(&t, PVDC_REG_INT_ENABLE, all_vblanks);

    cb0 = pvdc_timer_callbacks(&t);
    sent0 = pvdc_statistic_of(t.qts, "pvdc1", "x-mmio-writes");
    for (int i = 0; i < frames; i++) {
        pvdc_step_to(&t, t.now + period);
        g_assert_cmphex(pvdc_rd(&t, PVDC_REG_INT_ACK), ==, all_vblanks);
    }
    cb = pvdc_timer_callbacks(&t) - cb0;
    sent = pvdc_statistic_of(t.qts, "pvdc1", "x-mmio-writes") - sent0;
    g_test_message("%" PRIu64 " messages from %" PRIu64 " timer callbacks "
                   "for %d frames of 8 heads", sent, cb, frames);
    g_assert_cmpuint(cb, ==, frames);
    g_assert_cmpuint(sent, ==, frames);

    pvdc_wr(&t, PVDC_REG_INT_ENABLE, 0);
    g_free(counter);
    pvdc_test_stop(&t);
}

/* A head of @w x @h at 60 Hz showing a framebuffer of its size at 0. */
static void enable_head_60hz(PVDCTest *t, unsigned int head, uint32_t w,
                             uint32_t h)
{
    pvdc_write_mode_sized(t, head, w, h, w, h, DIV_ROUND_UP(w * h * 60, 1000));
    pvdc_wr_plane(t, pvdc_plane_of(t, head, PRIMARY), PVDC_PS_HEAD, head);
    pvdc_write_fb(t, pvdc_plane_of(t, head, PRIMARY), PVDC_FMT_XRGB8888, 0,
                  w * 4, w, h);
    pvdc_wr_plane(t, pvdc_plane_of(t, head, PRIMARY), PVDC_PS_ZPOS, 0);
    pvdc_wr_plane(t, pvdc_plane_of(t, head, PRIMARY), PVDC_PS_CTRL,
                  PVDC_PS_CTRL_ENABLE);
    g_assert_cmphex(pvdc_commit(t, head), ==, PVDC_RESULT_APPLIED);
}

/* With capture on and nobody reading, CRCs cost nothing at all. */
static void test_crc_capture_costs_nothing_until_read(void)
{
    uint64_t cb, n;
    uint32_t crc, frame;
    PVDCTest t;

    pvdc_test_start(&t, NULL);
    enable_head_60hz(&t, 0, 1024, 768);
    enable_head_60hz(&t, 1, 1024, 768);
    pvdc_wr(&t, PVDC_HEAD_CONTROL(0) + PVDC_HEAD_CRC_CTRL,
            PVDC_CRC_CTRL_ENABLE);
    pvdc_wr(&t, PVDC_HEAD_CONTROL(1) + PVDC_HEAD_CRC_CTRL,
            PVDC_CRC_CTRL_ENABLE);
    cb = pvdc_timer_callbacks(&t);
    n = pvdc_statistic(t.qts, "x-compositions");
    pvdc_step_to(&t, t.now + NANOSECONDS_PER_SECOND);
    g_assert_cmpuint(pvdc_timer_callbacks(&t), ==, cb);
    g_assert_cmpuint(pvdc_statistic(t.qts, "x-compositions"), ==, n);

    /* Read, the frame is composed once, however often it is read. */
    crc = pvdc_read_crc(&t, 0, &frame);
    g_assert_cmpuint(frame, ==, pvdc_head_ctl(&t, 0, PVDC_HEAD_VBLANK_COUNT));
    for (int i = 0; i < 100; i++) {
        g_assert_cmphex(pvdc_read_crc(&t, 0, &frame), ==, crc);
    }
    g_assert_cmpuint(pvdc_statistic(t.qts, "x-compositions"), ==, n + 1);
    pvdc_test_stop(&t);
}

/*
 * Two 2048x1536 heads at 60 Hz whose CRCs are read at every vblank ask
 * for more than PVDC_CRC_PIXELS_PER_SECOND: the device captures what its
 * budget allows and says which frames it skipped, through CRC_FRAME.
 */
static void test_crc_capture_is_bounded_device_wide(void)
{
    const uint32_t w = 2048, h = 1536;
    /* one plane each: the head and the plane are composed */
    const uint64_t cost = (uint64_t)w * h * 2;
    uint64_t n0, captured, asked = 0, skipped = 0, allowed;
    int64_t start;
    PVDCTest t;

    pvdc_test_start(&t, NULL);
    g_free(pvdc_fill_vram(&t, 0, (size_t)w * h * 4, 1));
    enable_head_60hz(&t, 0, w, h);
    enable_head_60hz(&t, 1, w, h);
    pvdc_wr(&t, PVDC_HEAD_CONTROL(0) + PVDC_HEAD_CRC_CTRL,
            PVDC_CRC_CTRL_ENABLE);
    pvdc_wr(&t, PVDC_HEAD_CONTROL(1) + PVDC_HEAD_CRC_CTRL,
            PVDC_CRC_CTRL_ENABLE);
    n0 = pvdc_statistic(t.qts, "x-compositions");
    start = t.now;
    while (t.now < start + NANOSECONDS_PER_SECOND) {
        uint32_t period = pvdc_head_ctl(&t, 0, PVDC_HEAD_FRAME_PERIOD);
        uint32_t frame;

        /* the next vblank of either head */
        pvdc_step_to(&t,
                     MIN(pvdc_vblank_time(&t, 0),
                         pvdc_vblank_time(&t, 1)) + period);
        for (unsigned int k = 0; k < 2; k++) {
            (void)pvdc_read_crc(&t, k, &frame);
            asked++;
            skipped += frame != pvdc_head_ctl(&t, k, PVDC_HEAD_VBLANK_COUNT);
        }
    }
    captured = pvdc_statistic(t.qts, "x-compositions") - n0;
    /* a burst of an eighth of a second, a second's worth, one overdraw */
    allowed = (PVDC_CRC_PIXELS_PER_SECOND / 8 + PVDC_CRC_PIXELS_PER_SECOND +
               cost - 1) / cost + 1;
    g_test_message("%" PRIu64 " captures of %" PRIu64 " pixels in a second "
                   "(%" PRIu64 " reads, %" PRIu64 " skipped, %" PRIu64
                   " allowed)", captured, cost, asked, skipped, allowed);
    g_assert_cmpuint(captured, <=, allowed);
    g_assert_cmpuint(captured, >=, allowed / 2);
    g_assert_cmpuint(skipped, >, 0);
    pvdc_test_stop(&t);
}

/*
 * Dirty tracking looks at the lines a plane samples, not at the span its
 * pitch puts between them: two 256-byte lines 8 MiB apart cost a few page
 * lookups a refresh, not the 2048 pages in between.
 */
static void test_damage_scan_follows_the_lines_shown(void)
{
    const uint32_t pitch = 8 * MiB, w = MODE_W, h = 2;
    const uint32_t pixel = 0x00c0ffee;
    unsigned int primary;
    uint64_t pages;
    PVDCTest t;

    pvdc_test_start(&t, "vram-size=16M");
    primary = pvdc_plane_of(&t, 0, PRIMARY);
    pvdc_write_mode_sized(&t, 0, w, h, MODE_HTOTAL, 4, MODE_HTOTAL * 4);
    pvdc_wr_plane(&t, primary, PVDC_PS_HEAD, 0);
    pvdc_write_fb(&t, primary, PVDC_FMT_XRGB8888, 0, pitch, w, h);
    pvdc_wr_plane(&t, primary, PVDC_PS_ZPOS, 0);
    pvdc_wr_plane(&t, primary, PVDC_PS_CTRL, PVDC_PS_CTRL_ENABLE);
    g_assert_cmphex(pvdc_commit(&t, 0), ==, PVDC_RESULT_APPLIED);
    pvdc_compose_again(&t, 0);

    for (int i = 0; i < 4; i++) {
        qtest_memwrite(t.qts, t.vram.addr + pitch + 4 * i, &pixel, 4);
        pages = pvdc_statistic(t.qts, "x-damage-pages");
        pvdc_compose_again(&t, 0);
        g_assert_cmpuint(pvdc_statistic(t.qts, "x-damage-pages") - pages,
                         <=, 2 * h);
    }
    pvdc_test_stop(&t);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);

    qtest_add_func("/pvdc/hostile/msi-into-own-bar-does-not-reenter",
                   test_msi_into_own_bar_does_not_reenter);
    qtest_add_func("/pvdc/hostile/vblank-storm-keeps-the-device-responsive",
                   test_vblank_storm_keeps_the_device_responsive);
    qtest_add_func("/pvdc/hostile/unacknowledged-vblank-storm-is-rate-limited",
                   test_unacknowledged_vblank_storm_is_rate_limited);
    qtest_add_func("/pvdc/hostile/doorbell-storms-are-absorbed",
                   test_doorbell_storms_are_absorbed);
    qtest_add_func("/pvdc/hostile/timer-rate-is-bounded-device-wide",
                   test_timer_rate_is_bounded_device_wide);
    qtest_add_func("/pvdc/hostile/interrupt-messages-are-bounded-device-wide",
                   test_interrupt_messages_are_bounded_device_wide);
    qtest_add_func("/pvdc/hostile/crc-capture-costs-nothing-until-read",
                   test_crc_capture_costs_nothing_until_read);
    qtest_add_func("/pvdc/hostile/crc-capture-is-bounded-device-wide",
                   test_crc_capture_is_bounded_device_wide);
    qtest_add_func("/pvdc/hostile/damage-scan-follows-the-lines-shown",
                   test_damage_scan_follows_the_lines_shown);

    return g_test_run();
}
