/*
 * QTest cases for pvdc's vblanks and interrupts: the vblank counter and
 * timestamp, exact and never torn, the frame a commit completes in, no timer
 * while idle, the statistics, INTx and MSI, and the device clock.
 *
 * Time only moves through the qtest clock (pvdc_step_to(), pvdc_step_next()):
 * every expectation about a vblank or a latch point is exact to the
 * nanosecond.  The test modes are tiny (64x48) so that a frame lasts a round
 * number of milliseconds.
 *
 * Copyright (c) 2026 The pvdc authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "pvdc-qtest.h"

static void test_vblank_counter_and_timestamp_are_exact(void)
{
    const uint64_t p1 = pvdc_period_ns(CLOCK_2MS);
    static const int64_t offsets[] = {
        0, 1, 1999999, 2000000, 2000001, 7 * 2000000 - 1, 7 * 2000000,
        123456789, 5 * NANOSECONDS_PER_SECOND + 17,
    };
    uint32_t lo, hi;
    int64_t t0;
    PVDCTest t;

    pvdc_test_start(&t, NULL);
    pvdc_step_to(&t, 777);
    t0 = pvdc_enable_head(&t, 1, CLOCK_2MS);
    g_assert_cmpuint(pvdc_head_ctl(&t, 1, PVDC_HEAD_VBLANK_COUNT), ==, 0);
    g_assert_cmpuint(pvdc_vblank_time(&t, 1), ==, t0);

    for (int i = 0; i < ARRAY_SIZE(offsets); i++) {
        uint64_t n = offsets[i] / p1;

        pvdc_step_to(&t, t0 + offsets[i]);
        g_assert_cmpuint(pvdc_head_ctl(&t, 1, PVDC_HEAD_VBLANK_COUNT), ==, n);
        g_assert_cmpuint(pvdc_vblank_time(&t, 1), ==, t0 + n * p1);
    }
    /* Head 0 never enabled: no vblanks. */
    g_assert_cmpuint(pvdc_head_ctl(&t, 0, PVDC_HEAD_VBLANK_COUNT), ==, 0);
    g_assert_cmpuint(pvdc_vblank_time(&t, 0), ==, 0);

    /* Reading LO latches HI: a later HI read belongs to that LO. */
    lo = pvdc_head_ctl(&t, 1, PVDC_HEAD_VBLANK_TIME_LO);
    hi = extract64(t0 + (5 * NANOSECONDS_PER_SECOND + 17) / p1 * p1, 32, 32);
    pvdc_step_to(&t, pvdc_now_ns(&t) + 5 * NANOSECONDS_PER_SECOND);
    g_assert_cmpuint(pvdc_head_ctl(&t, 1, PVDC_HEAD_VBLANK_TIME_HI), ==, hi);
    g_assert_cmpuint(lo, ==,
                     (uint32_t)(t0 + (5 * NANOSECONDS_PER_SECOND + 17) /
                                p1 * p1));
    g_assert_cmpuint(pvdc_vblank_time(&t, 1), ==,
                     t0 + (pvdc_now_ns(&t) - t0) / p1 * p1);
    pvdc_test_stop(&t);
}

/*
 * A reader of the vblank triple as the spec says to read it from more than
 * one context: VBLANK_COUNT, then LO and HI, then VBLANK_COUNT again, and
 * LO and HI again if the count moved.  Without @recheck, LO and HI once.
 */
typedef struct VblankReader {
    bool recheck;
    unsigned int step;          /* the next access */
    unsigned int retries;
    bool done;
    uint32_t count, lo, hi;
} VblankReader;

static void vblank_reader_step(PVDCTest *t, VblankReader *r)
{
    uint32_t again;

    g_assert_false(r->done);
    switch (r->step++) {
    case 0:
        r->count = pvdc_head_ctl(t, 0, PVDC_HEAD_VBLANK_COUNT);
        break;
    case 1:
        r->lo = pvdc_head_ctl(t, 0, PVDC_HEAD_VBLANK_TIME_LO);
        break;
    case 2:
        r->hi = pvdc_head_ctl(t, 0, PVDC_HEAD_VBLANK_TIME_HI);
        r->done = !r->recheck;
        break;
    default:
        again = r->count;
        r->count = pvdc_head_ctl(t, 0, PVDC_HEAD_VBLANK_COUNT);
        r->done = r->count == again;
        if (!r->done) {
            r->retries++;
            r->step = 1;
        }
        break;
    }
}

/*
 * Two readers, @first accesses each, interleaved as the bits of @order say
 * (set: reader 0), with the clock moved onto @vblank, the first vblank with
 * a new VBLANK_TIME_HI, before access number @when; then each reader
 * finishes alone.  Returns how many read a time that is no vblank's time.
 */
static unsigned int vblank_readers_run(PVDCTest *t, bool recheck,
                                       unsigned int first, unsigned int order,
                                       unsigned int when, int64_t t0,
                                       uint64_t period, int64_t vblank,
                                       unsigned int *retries)
{
    VblankReader r[2] = { { .recheck = recheck }, { .recheck = recheck } };
    unsigned int torn = 0;

    for (unsigned int i = 0; i <= 2 * first; i++) {
        if (i == when) {
            pvdc_step_to(t, vblank);
        }
        if (i < 2 * first) {
            vblank_reader_step(t, &r[!(order & BIT(i))]);
        }
    }
    for (unsigned int i = 0; i < 2; i++) {
        uint64_t time;

        /* No vblank follows @vblank here: one more round at most. */
        for (unsigned int n = 0; !r[i].done && n < 8; n++) {
            vblank_reader_step(t, &r[i]);
        }
        g_assert_true(r[i].done);
        g_assert_cmpuint(r[i].retries, <=, 1);
        *retries += r[i].retries;

        time = (uint64_t)r[i].hi << 32 | r[i].lo;
        if (recheck) {
            g_assert_cmpuint(time, ==, t0 + (uint64_t)r[i].count * period);
        }
        torn += time != vblank && time != vblank - period;
    }
    return torn;
}

/*
 * An interrupt handler and a thread of the guest read VBLANK_COUNT and
 * VBLANK_TIME with no lock between them.  Each read of LO latches HI for
 * every reader, so a vblank that carries VBLANK_TIME over a 2^32 ns
 * boundary between one reader's LO and HI, with the other's LO between
 * them, tears the first reader's pair.  Read as the spec says, with
 * VBLANK_COUNT before and after, every order of the two readers' accesses
 * and every place of that vblank among them gives both the count and the
 * time of one vblank; read without the second VBLANK_COUNT, some tear.
 */
static void test_vblank_time_never_tears_between_two_readers(void)
{
    const uint64_t period = pvdc_period_ns(CLOCK_2MS);
    unsigned int cases = 0, retries = 0, torn = 0;
    int64_t t0, boundary = 0;
    PVDCTest t;

    pvdc_test_start(&t, NULL);
    t0 = pvdc_enable_head(&t, 0, CLOCK_2MS);
    g_assert_cmpuint(pvdc_head_ctl(&t, 0, PVDC_HEAD_VBLANK_COUNT), ==, 0);

    for (int recheck = 1; recheck >= 0; recheck--) {
        unsigned int first = recheck ? 4 : 3;

        for (unsigned int order = 0; order < BIT(2 * first); order++) {
            if (ctpop32(order) != first) {
                continue;
            }
            for (unsigned int when = 0; when <= 2 * first; when++) {
                int64_t vblank;

                boundary += 1LL << 32;
                vblank = t0 + DIV_ROUND_UP(boundary - t0, period) * period;
                g_assert_cmpuint(extract64(vblank - period, 32, 32), !=,
                                 extract64(vblank, 32, 32));
                pvdc_step_to(&t, vblank - 1);

                torn += vblank_readers_run(&t, recheck, first, order, when,
                                           t0, period, vblank, &retries);
                cases++;
            }
        }
    }
    /* Every order of C(8, 4) and C(6, 3), every place of the vblank. */
    g_assert_cmpuint(cases, ==, 70 * 9 + 20 * 7);
    /* The vblank did fall between readers' two counts... */
    g_assert_cmpuint(retries, >, 0);
    /* ... and does tear a pair that is read without them. */
    g_assert_cmpuint(torn, >, 0);
    pvdc_test_stop(&t);
}

/*
 * DONE_FRAME tells which vblank the commit of DONE_SEQ latched at, long
 * after it did: what a driver that handles the interrupt late needs to
 * stamp its event with the right frame.
 */
static void test_vblank_done_frame_is_the_latch_frame(void)
{
    const uint64_t p0 = pvdc_period_ns(CLOCK_1MS);
    const uint64_t p1 = pvdc_period_ns(CLOCK_2MS);
    unsigned int primary;
    int64_t t0, t1, group;
    PVDCTest t;

    pvdc_test_start(&t, NULL);
    primary = pvdc_plane_of(&t, 0, PRIMARY);
    pvdc_step_to(&t, 1234);
    t0 = pvdc_enable_head(&t, 0, CLOCK_1MS);
    g_assert_cmpuint(pvdc_head_ctl(&t, 0, PVDC_HEAD_DONE_FRAME), ==, 0);

    /* A flip armed in frame 4 latches at vblank 5; read at frame 11. */
    pvdc_step_to(&t, t0 + 4 * p0 + p0 / 2);
    pvdc_wr(&t, PVDC_PLANE_SHADOW(primary) + PVDC_PS_FB_OFFSET, 64 * KiB);
    pvdc_doorbell(&t, 0);
    pvdc_step_to(&t, t0 + 11 * p0 + 1);
    g_assert_cmpuint(pvdc_head_ctl(&t, 0, PVDC_HEAD_DONE_SEQ), ==, 2);
    g_assert_cmpuint(pvdc_head_ctl(&t, 0, PVDC_HEAD_VBLANK_COUNT), ==, 11);
    g_assert_cmpuint(pvdc_head_ctl(&t, 0, PVDC_HEAD_DONE_FRAME), ==, 5);

    /* A refused commit too: the frame it was refused at. */
    pvdc_wr(&t, PVDC_PLANE_SHADOW(primary) + PVDC_PS_FORMAT, 0);
    pvdc_doorbell(&t, 0);
    pvdc_step_to(&t, t0 + 14 * p0);
    g_assert_cmphex(pvdc_head_ctl(&t, 0, PVDC_HEAD_RESULT), ==,
                    pvdc_result_of(PVDC_ERR_FORMAT, primary));
    g_assert_cmpuint(pvdc_head_ctl(&t, 0, PVDC_HEAD_DONE_FRAME), ==, 12);
    pvdc_wr(&t, PVDC_PLANE_SHADOW(primary) + PVDC_PS_FORMAT, PVDC_FMT_XRGB8888);

    /* A disable: the count it froze; an enable: the count it resumes. */
    pvdc_wr_head(&t, 0, PVDC_HS_CTRL, 0);
    pvdc_wr(&t, PVDC_PLANE_SHADOW(primary) + PVDC_PS_CTRL, 0);
    pvdc_doorbell(&t, 0);
    pvdc_step_to(&t, t0 + 20 * p0);
    g_assert_cmphex(pvdc_head_ctl(&t, 0, PVDC_HEAD_RESULT), ==,
                    PVDC_RESULT_APPLIED);
    g_assert_cmpuint(pvdc_head_ctl(&t, 0, PVDC_HEAD_DONE_FRAME), ==, 15);
    t0 = pvdc_enable_head(&t, 0, CLOCK_1MS);
    g_assert_cmpuint(pvdc_head_ctl(&t, 0, PVDC_HEAD_DONE_FRAME), ==, 15);

    /*
     * A group latches at the latest of its members' vblanks: for head 1
     * (2 ms, enabled 0.5 ms after head 0) that is its vblank 2, for
     * head 0 (1 ms) the middle of its frame 4.
     */
    pvdc_step_to(&t, pvdc_now_ns(&t) + p0 / 2);
    t1 = pvdc_enable_head(&t, 1, CLOCK_2MS);
    pvdc_step_to(&t, t1 + p1 + p1 / 4);
    pvdc_wr(&t, PVDC_PLANE_SHADOW(primary) + PVDC_PS_FB_OFFSET, 0);
    pvdc_wr(&t,
            PVDC_PLANE_SHADOW(pvdc_plane_of(&t, 1,
                                            PRIMARY)) + PVDC_PS_FB_OFFSET,
            64 * KiB);
    pvdc_wr(&t, PVDC_REG_MULTI_DOORBELL, BIT(0) | BIT(1));
    group = t1 + 2 * p1;
    pvdc_step_to(&t, group + 8 * p1);
    for (unsigned int h = 0; h < 2; h++) {
        g_assert_cmpuint(pvdc_head_ctl(&t, h, PVDC_HEAD_DONE_SEQ), ==,
                         pvdc_head_ctl(&t, h, PVDC_HEAD_ARMED_SEQ));
        g_assert_cmphex(pvdc_head_ctl(&t, h, PVDC_HEAD_RESULT), ==,
                        PVDC_RESULT_APPLIED);
    }
    g_assert_cmpuint(pvdc_head_ctl(&t, 1, PVDC_HEAD_DONE_FRAME), ==, 2);
    g_assert_cmpuint(pvdc_head_ctl(&t, 0, PVDC_HEAD_DONE_FRAME), ==,
                     15 + (group - t0) / p0);
    g_assert_cmpuint((group - t0) % p0, !=, 0);
    pvdc_test_stop(&t);
}

static void test_statistics_count_writes_and_commit_outcomes(void)
{
    uint64_t writes;
    PVDCTest t;

    pvdc_test_start(&t, NULL);
    g_assert_cmpuint(pvdc_statistic(t.qts, "x-mmio-writes"), ==, 0);
    g_assert_cmpuint(pvdc_statistic(t.qts, "x-commits-applied"), ==, 0);
    g_assert_cmpuint(pvdc_statistic(t.qts, "x-commits-rejected"), ==, 0);

    pvdc_enable_head(&t, 0, CLOCK_1MS);
    writes = pvdc_statistic(t.qts, "x-mmio-writes");
    g_assert_cmpuint(writes, >, 0);
    g_assert_cmpuint(pvdc_statistic(t.qts, "x-commits-applied"), ==, 1);

    /* Reads, the interrupt acknowledge included, are not writes. */
    pvdc_rd(&t, PVDC_REG_INT_ACK);
    pvdc_head_ctl(&t, 0, PVDC_HEAD_RESULT);
    g_assert_cmpuint(pvdc_statistic(t.qts, "x-mmio-writes"), ==, writes);

    pvdc_wr(&t,
            PVDC_PLANE_SHADOW(pvdc_plane_of(&t, 0,
                                            PRIMARY)) + PVDC_PS_FORMAT, 0);
    pvdc_doorbell(&t, 0);
    g_assert_cmphex(pvdc_wait_outcome(&t, 0, 2 * SCALE_MS), ==,
                    pvdc_result_of(PVDC_ERR_FORMAT,
                                   pvdc_plane_of(&t, 0, PRIMARY)));
    g_assert_cmpuint(pvdc_statistic(t.qts, "x-mmio-writes"), ==, writes + 2);
    g_assert_cmpuint(pvdc_statistic(t.qts, "x-commits-applied"), ==, 1);
    g_assert_cmpuint(pvdc_statistic(t.qts, "x-commits-rejected"), ==, 1);
    pvdc_test_stop(&t);
}

static void test_no_timer_callbacks_while_idle(void)
{
    const uint64_t p0 = pvdc_period_ns(CLOCK_1MS);
    uint64_t before;
    int64_t t0;
    PVDCTest t;

    pvdc_test_start(&t, NULL);
    pvdc_step_to(&t, 100 * p0);
    g_assert_cmpuint(pvdc_timer_callbacks(&t), ==, 0);

    /* A commit read back at once needs no callback at all. */
    t0 = pvdc_enable_head(&t, 0, CLOCK_1MS);
    before = pvdc_timer_callbacks(&t);
    g_assert_cmpuint(before, <=, 1);
    /* Enabled, but no vblank interrupt and nothing armed. */
    pvdc_step_to(&t, t0 + 100 * p0 + p0 / 2);
    g_assert_cmpuint(pvdc_timer_callbacks(&t), ==, before);
    g_assert_cmpuint(pvdc_head_ctl(&t, 0, PVDC_HEAD_VBLANK_COUNT), ==, 100);

    /* With the vblank interrupt acknowledged: one callback per frame. */
    (void)pvdc_rd(&t, PVDC_REG_INT_ACK);
    pvdc_wr(&t, PVDC_REG_INT_ENABLE, PVDC_INT(0, PVDC_INT_VBLANK));
    for (int i = 1; i <= 10; i++) {
        pvdc_step_to(&t, t0 + (100 + i) * p0);
        g_assert_cmphex(pvdc_rd(&t, PVDC_REG_INT_ACK), ==,
                        PVDC_INT(0, PVDC_INT_VBLANK));
    }
    g_assert_cmpuint(pvdc_timer_callbacks(&t), ==, before + 10);
    /* Not acknowledged, the next vblank changes nothing: no callback. */
    pvdc_step_to(&t, t0 + 120 * p0 + p0 / 2);
    g_assert_cmpuint(pvdc_timer_callbacks(&t), ==, before + 11);
    pvdc_wr(&t, PVDC_REG_INT_ENABLE, 0);
    pvdc_step_to(&t, t0 + 200 * p0);
    g_assert_cmpuint(pvdc_timer_callbacks(&t), ==, before + 11);

    /* An armed commit: one callback, at its latch point. */
    pvdc_doorbell(&t, 0);
    pvdc_step_to(&t, t0 + 300 * p0);
    g_assert_cmpuint(pvdc_timer_callbacks(&t), ==, before + 12);
    pvdc_test_stop(&t);
}

static void test_interrupt_status_enable_and_ack(void)
{
    const uint64_t p0 = pvdc_period_ns(CLOCK_1MS);
    const uint32_t done0 = PVDC_INT(0, PVDC_INT_COMMIT_DONE);
    const uint32_t done1 = PVDC_INT(1, PVDC_INT_COMMIT_DONE);
    const uint32_t vblank0 = PVDC_INT(0, PVDC_INT_VBLANK);
    PVDCTest t;
    int64_t t0;
    int gsi;

    pvdc_test_start(&t, NULL);
    qtest_irq_intercept_in(t.qts, "ioapic");

    /* Status is set whatever the enable says; the line is not. */
    t0 = pvdc_enable_head(&t, 0, CLOCK_1MS);
    pvdc_enable_head(&t, 1, CLOCK_1MS);
    g_assert_cmphex(pvdc_rd(&t, PVDC_REG_INT_STATUS), ==, done0 | done1);
    gsi = pvdc_find_intx_gsi(&t);

    /* Enabling a pending bit raises the line; W1C of it lowers it. */
    pvdc_wr(&t, PVDC_REG_INT_ENABLE, done1);
    g_assert_true(qtest_get_irq(t.qts, gsi));
    pvdc_wr(&t, PVDC_REG_INT_STATUS, done0);
    g_assert_cmphex(pvdc_rd(&t, PVDC_REG_INT_STATUS), ==, done1);
    g_assert_true(qtest_get_irq(t.qts, gsi));
    pvdc_wr(&t, PVDC_REG_INT_STATUS, done1);
    g_assert_cmphex(pvdc_rd(&t, PVDC_REG_INT_STATUS), ==, 0);
    g_assert_false(qtest_get_irq(t.qts, gsi));

    /* Vblank interrupts: only from the vblank after enabling. */
    pvdc_step_to(&t, t0 + 3 * p0 + p0 / 2);
    pvdc_wr(&t, PVDC_REG_INT_ENABLE, vblank0);
    g_assert_cmphex(pvdc_rd(&t, PVDC_REG_INT_STATUS), ==, 0);
    pvdc_step_to(&t, t0 + 4 * p0 - 1);
    g_assert_false(qtest_get_irq(t.qts, gsi));
    pvdc_step_to(&t, t0 + 4 * p0);
    g_assert_true(qtest_get_irq(t.qts, gsi));
    g_assert_cmphex(pvdc_rd(&t, PVDC_REG_INT_STATUS), ==, vblank0);

    /* INT_ACK: one read acknowledges everything it returns. */
    g_assert_cmphex(pvdc_rd(&t, PVDC_REG_INT_ACK), ==, vblank0);
    g_assert_false(qtest_get_irq(t.qts, gsi));
    g_assert_cmphex(pvdc_rd(&t, PVDC_REG_INT_STATUS), ==, 0);
    g_assert_cmphex(pvdc_rd(&t, PVDC_REG_INT_ACK), ==, 0);
    pvdc_step_to(&t, t0 + 5 * p0);
    g_assert_true(qtest_get_irq(t.qts, gsi));

    /* Masking keeps the status but drops the line. */
    pvdc_wr(&t, PVDC_REG_INT_ENABLE, 0);
    g_assert_false(qtest_get_irq(t.qts, gsi));
    g_assert_cmphex(pvdc_rd(&t, PVDC_REG_INT_STATUS), ==, vblank0);

    /* Bits of heads that do not exist: the write is ignored. */
    pvdc_wr(&t, PVDC_REG_INT_ENABLE, PVDC_INT(t.heads, PVDC_INT_VBLANK));
    g_assert_cmphex(pvdc_rd(&t, PVDC_REG_INT_ENABLE), ==, 0);

    /* A primary flip in three accesses. */
    pvdc_wr(&t, PVDC_REG_INT_ENABLE, done0);
    (void)pvdc_rd(&t, PVDC_REG_INT_ACK);
    pvdc_wr_plane(&t, pvdc_plane_of(&t, 0, PRIMARY), PVDC_PS_FB_OFFSET,
                  4 * KiB);
    pvdc_doorbell(&t, 0);
    pvdc_step_to(&t, t0 + 6 * p0);
    g_assert_true(qtest_get_irq(t.qts, gsi));
    g_assert_cmphex(pvdc_rd(&t, PVDC_REG_INT_ACK), ==, done0);
    g_assert_false(qtest_get_irq(t.qts, gsi));
    g_assert_cmphex(pvdc_rd(&t, PVDC_PLANE_ACTIVE(0) + PVDC_PS_FB_OFFSET), ==,
                    4 * KiB);
    pvdc_test_stop(&t);
}

/* Where the test points MSI: plain guest RAM, so messages can be read. */
#define MSI_ADDR    0x100000
#define MSI_DATA    0x4321

static void msi_enable(PVDCTest *t)
{
    uint8_t cap = qpci_find_capability(t->dev, PCI_CAP_ID_MSI, 0);
    uint16_t flags = qpci_config_readw(t->dev, cap + PCI_MSI_FLAGS);

    g_assert_true(flags & PCI_MSI_FLAGS_64BIT);
    qpci_config_writel(t->dev, cap + PCI_MSI_ADDRESS_LO, MSI_ADDR);
    qpci_config_writel(t->dev, cap + PCI_MSI_ADDRESS_HI, 0);
    qpci_config_writew(t->dev, cap + PCI_MSI_DATA_64, MSI_DATA);
    qpci_config_writew(t->dev, cap + PCI_MSI_FLAGS,
                       flags | PCI_MSI_FLAGS_ENABLE);
}

static bool msi_sent(PVDCTest *t)
{
    uint32_t data = qtest_readl(t->qts, MSI_ADDR);

    qtest_writel(t->qts, MSI_ADDR, 0);
    g_assert(data == 0 || data == MSI_DATA);
    return data == MSI_DATA;
}

static void test_msi_replaces_intx(void)
{
    const uint64_t p0 = pvdc_period_ns(CLOCK_1MS);
    const uint32_t vblank0 = PVDC_INT(0, PVDC_INT_VBLANK);
    const uint32_t done0 = PVDC_INT(0, PVDC_INT_COMMIT_DONE);
    PVDCTest t;
    int64_t t0;
    int gsi;

    pvdc_test_start(&t, NULL);
    qtest_irq_intercept_in(t.qts, "ioapic");
    t0 = pvdc_enable_head(&t, 0, CLOCK_1MS);
    gsi = pvdc_find_intx_gsi(&t);
    (void)pvdc_rd(&t, PVDC_REG_INT_ACK);

    qtest_writel(t.qts, MSI_ADDR, 0);
    msi_enable(&t);
    pvdc_wr(&t, PVDC_REG_INT_ENABLE, vblank0 | done0);
    g_assert_false(msi_sent(&t));

    /* One message when an enabled bit becomes set, never INTx. */
    pvdc_step_to(&t, t0 + p0);
    g_assert_true(msi_sent(&t));
    g_assert_false(qtest_get_irq(t.qts, gsi));
    /* Set again while still set: no new message. */
    pvdc_step_to(&t, t0 + 2 * p0);
    g_assert_false(msi_sent(&t));
    /* Another bit: a message. */
    pvdc_doorbell(&t, 0);
    pvdc_step_to(&t, t0 + 3 * p0);
    g_assert_true(msi_sent(&t));
    g_assert_cmphex(pvdc_rd(&t, PVDC_REG_INT_ACK), ==, vblank0 | done0);
    pvdc_step_to(&t, t0 + 4 * p0);
    g_assert_true(msi_sent(&t));
    g_assert_false(qtest_get_irq(t.qts, gsi));

    /* Back to INTx: the pending interrupt shows on the line. */
    qpci_config_writew(t.dev,
                       qpci_find_capability(t.dev, PCI_CAP_ID_MSI, 0) +
                       PCI_MSI_FLAGS, 0);
    g_assert_true(qtest_get_irq(t.qts, gsi));
    g_assert_false(msi_sent(&t));
    pvdc_test_stop(&t);
}

static void test_clock_reads_the_virtual_clock(void)
{
    const int64_t later = 5 * NANOSECONDS_PER_SECOND + 123;
    PVDCTest t;

    pvdc_test_start(&t, NULL);
    g_assert_cmpuint(pvdc_rd(&t, PVDC_REG_CLOCK_LO), ==,
                     (uint32_t)pvdc_now_ns(&t));
    g_assert_cmpuint(pvdc_rd(&t, PVDC_REG_CLOCK_HI), ==, 0);
    pvdc_step_to(&t, later);
    g_assert_cmpuint(pvdc_rd(&t, PVDC_REG_CLOCK_HI), ==, later >> 32);
    g_assert_cmpuint(pvdc_rd(&t, PVDC_REG_CLOCK_LO), ==, (uint32_t)later);
    /* Stateless: reading HI alone, or twice, changes nothing. */
    g_assert_cmpuint(pvdc_rd(&t, PVDC_REG_CLOCK_HI), ==, later >> 32);
    pvdc_test_stop(&t);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);

    qtest_add_func("/pvdc/vblank/counter-and-timestamp-are-exact",
                   test_vblank_counter_and_timestamp_are_exact);
    qtest_add_func("/pvdc/vblank/time-never-tears-between-two-readers",
                   test_vblank_time_never_tears_between_two_readers);
    qtest_add_func("/pvdc/vblank/done-frame-is-the-latch-frame",
                   test_vblank_done_frame_is_the_latch_frame);
    qtest_add_func("/pvdc/vblank/no-timer-callbacks-while-idle",
                   test_no_timer_callbacks_while_idle);
    qtest_add_func("/pvdc/statistics/count-writes-and-commit-outcomes",
                   test_statistics_count_writes_and_commit_outcomes);

    qtest_add_func("/pvdc/irq/status-enable-and-ack-drive-intx",
                   test_interrupt_status_enable_and_ack);
    qtest_add_func("/pvdc/irq/msi-replaces-intx", test_msi_replaces_intx);
    qtest_add_func("/pvdc/clock/reads-the-virtual-clock",
                   test_clock_reads_the_virtual_clock);

    return g_test_run();
}
