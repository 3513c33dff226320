/*
 * QTest cases for pvdc's commits: shadow, armed and active state, a commit
 * applying exactly at the next vblank, doorbells that overrun or amend an
 * armed commit, a reset that cancels one, and the frame CRC following the
 * active frame.
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

static void test_shadow_writes_without_doorbell_change_nothing(void)
{
    PVDCTest t;
    PVDCSnapshot before, shadow;
    int64_t t0;
    unsigned int i, r;

    pvdc_test_start(&t, NULL);
    t0 = pvdc_enable_head(&t, 0, CLOCK_1MS);
    pvdc_snapshot_active(&t, &before);

    for (i = 0; i < t.heads; i++) {
        for (r = 0; r < PVDC_HEAD_STATE_REGS; r++) {
            pvdc_wr(&t, PVDC_HEAD_SHADOW(i) + r * 4, 0x5a5a0000 + i * 16 + r);
        }
    }
    for (i = 0; i < t.planes; i++) {
        for (r = 0; r < PVDC_PLANE_STATE_REGS; r++) {
            pvdc_wr(&t, PVDC_PLANE_SHADOW(i) + r * 4, 0xa5a50000 + i * 16 + r);
        }
    }
    pvdc_snapshot_shadow(&t, &shadow);
    g_assert_cmphex(shadow.plane[1][PVDC_PS_ZPOS / 4], ==,
                    0xa5a50000 + 16 + PVDC_PS_ZPOS / 4);

    pvdc_step_to(&t, t0 + 50 * pvdc_period_ns(CLOCK_1MS) + 1);
    pvdc_assert_active_is(&t, &before);
    g_assert_cmpuint(pvdc_head_ctl(&t, 0, PVDC_HEAD_VBLANK_COUNT), ==, 50);
    g_assert_cmpuint(pvdc_head_ctl(&t, 0, PVDC_HEAD_DONE_SEQ), ==, 1);
    g_assert_cmpuint(pvdc_head_ctl(&t, 1, PVDC_HEAD_DONE_SEQ), ==, 0);
    pvdc_test_stop(&t);
}

static void test_commit_applies_exactly_at_next_vblank(void)
{
    const uint64_t period = pvdc_period_ns(CLOCK_1MS);
    unsigned int primary, overlay;
    PVDCSnapshot before, after;
    PVDCTest t;
    int64_t t0, arm;

    pvdc_test_start(&t, NULL);
    primary = pvdc_plane_of(&t, 0, PRIMARY);
    overlay = pvdc_plane_of(&t, 0, OVERLAY(0));
    t0 = pvdc_enable_head(&t, 0, CLOCK_1MS);
    pvdc_snapshot_active(&t, &before);

    /* Arm in the middle of frame 2: it latches at vblank 3. */
    arm = t0 + 2 * period + period / 3;
    pvdc_step_to(&t, arm);
    pvdc_wr(&t, PVDC_HEAD_SHADOW(0) + PVDC_HS_BACKGROUND, 0x00336699);
    pvdc_wr(&t, PVDC_PLANE_SHADOW(primary) + PVDC_PS_FB_OFFSET, 64 * KiB);
    pvdc_wr(&t, PVDC_PLANE_SHADOW(primary) + PVDC_PS_ALPHA, 0x8000);
    pvdc_write_plane(&t, overlay, 0, 128 * KiB, 1);
    pvdc_wr(&t, PVDC_PLANE_SHADOW(overlay) + PVDC_PS_DST_POS, PVDC_XY(-8, 4));
    pvdc_doorbell(&t, 0);
    g_assert_cmpuint(pvdc_head_ctl(&t, 0, PVDC_HEAD_DOORBELL), ==, 1);
    g_assert_cmpuint(pvdc_head_ctl(&t, 0, PVDC_HEAD_ARMED_SEQ), ==, 2);

    after = before;
    after.head[0][PVDC_HS_BACKGROUND / 4] = 0x00336699;
    after.plane[primary][PVDC_PS_FB_OFFSET / 4] = 64 * KiB;
    after.plane[primary][PVDC_PS_ALPHA / 4] = 0x8000;
    for (unsigned int r = 0; r < PVDC_PLANE_STATE_REGS; r++) {
        after.plane[overlay][r] = pvdc_rd(&t,
                                          PVDC_PLANE_SHADOW(overlay) + r * 4);
    }

    pvdc_step_to(&t, t0 + 3 * period - 1);
    pvdc_assert_active_is(&t, &before);
    g_assert_cmpuint(pvdc_head_ctl(&t, 0, PVDC_HEAD_DOORBELL), ==, 1);
    g_assert_cmpuint(pvdc_head_ctl(&t, 0, PVDC_HEAD_DONE_SEQ), ==, 1);

    pvdc_step_to(&t, t0 + 3 * period);
    pvdc_assert_active_is(&t, &after);
    g_assert_cmpuint(pvdc_head_ctl(&t, 0, PVDC_HEAD_DOORBELL), ==, 0);
    g_assert_cmpuint(pvdc_head_ctl(&t, 0, PVDC_HEAD_DONE_SEQ), ==, 2);
    g_assert_cmphex(pvdc_head_ctl(&t, 0, PVDC_HEAD_RESULT), ==,
                    PVDC_RESULT_APPLIED);
    g_assert_cmpuint(pvdc_head_ctl(&t, 0, PVDC_HEAD_VBLANK_COUNT), ==, 3);
    g_assert_cmphex(pvdc_rd(&t, PVDC_REG_INT_STATUS), ==,
                    PVDC_INT(0, PVDC_INT_COMMIT_DONE));

    /* Armed exactly at a vblank, it waits for the next one. */
    pvdc_wr(&t, PVDC_HEAD_SHADOW(0) + PVDC_HS_BACKGROUND, 0x00ffffff);
    pvdc_doorbell(&t, 0);
    pvdc_step_to(&t, t0 + 4 * period - 1);
    pvdc_assert_active_is(&t, &after);
    pvdc_step_to(&t, t0 + 4 * period);
    g_assert_cmphex(pvdc_rd(&t, PVDC_HEAD_ACTIVE(0) + PVDC_HS_BACKGROUND), ==,
                    0x00ffffff);
    pvdc_test_stop(&t);
}

static void test_writes_to_active_windows_are_ignored(void)
{
    PVDCSnapshot before;
    PVDCTest t;

    pvdc_test_start(&t, NULL);
    pvdc_enable_head(&t, 0, CLOCK_1MS);
    pvdc_snapshot_active(&t, &before);
    for (unsigned int r = 0; r < PVDC_HEAD_STATE_REGS; r++) {
        pvdc_wr(&t, PVDC_HEAD_ACTIVE(0) + r * 4, 0x12345678);
    }
    for (unsigned int r = 0; r < PVDC_PLANE_STATE_REGS; r++) {
        pvdc_wr(&t, PVDC_PLANE_ACTIVE(0) + r * 4, 0x12345678);
    }
    pvdc_wr(&t, PVDC_REG_ID, 0);
    pvdc_wr(&t, PVDC_REG_PLANE_CAPS(0), 0);
    pvdc_wr(&t, PVDC_HEAD_CONTROL(0) + PVDC_HEAD_ARMED_SEQ, 77);
    pvdc_assert_active_is(&t, &before);
    g_assert_cmphex(pvdc_rd(&t, PVDC_REG_ID), ==, PVDC_ID);
    g_assert_cmpuint(pvdc_head_ctl(&t, 0, PVDC_HEAD_ARMED_SEQ), ==, 1);
    pvdc_test_stop(&t);
}

static void test_disabled_head_commit_latches_at_once(void)
{
    PVDCTest t;
    int64_t arm;

    pvdc_test_start(&t, "x-link-up-delay-ms=5");
    pvdc_step_to(&t, 1000);
    arm = pvdc_now_ns(&t);
    pvdc_wr(&t, PVDC_HEAD_SHADOW(1) + PVDC_HS_BACKGROUND, 0x123456);
    pvdc_doorbell(&t, 1);
    g_assert_cmphex(pvdc_wait_outcome(&t, 1, 0), ==, PVDC_RESULT_APPLIED);
    g_assert_cmpint(pvdc_now_ns(&t), ==, arm);
    g_assert_cmphex(pvdc_rd(&t, PVDC_HEAD_ACTIVE(1) + PVDC_HS_BACKGROUND), ==,
                    0x123456);
    pvdc_test_stop(&t);
}

static void test_crc_follows_the_active_frame(void)
{
    const uint64_t p0 = pvdc_period_ns(CLOCK_1MS);
    g_autofree uint32_t *fb = g_new(uint32_t, MODE_W * MODE_H);
    g_autofree uint32_t *le = g_new(uint32_t, MODE_W * MODE_H);
    unsigned int primary;
    PVDCTest t;
    int64_t t0;
    int i;

    pvdc_test_start(&t, NULL);
    primary = pvdc_plane_of(&t, 0, PRIMARY);
    for (i = 0; i < MODE_W * MODE_H; i++) {
        fb[i] = 0xff000000 | (i * 0x010203);
        le[i] = cpu_to_le32(fb[i]);
    }
    qtest_memwrite(t.qts, t.vram.addr, le, MODE_W * MODE_H * sizeof(*le));

    t0 = pvdc_enable_head(&t, 0, CLOCK_1MS);
    pvdc_wr(&t, PVDC_HEAD_CONTROL(0) + PVDC_HEAD_CRC_CTRL,
            PVDC_CRC_CTRL_ENABLE);
    pvdc_step_to(&t, t0 + 2 * p0);
    g_assert_cmphex(pvdc_head_ctl(&t, 0, PVDC_HEAD_CRC_VALUE), ==,
                    pvdc_frame_crc(fb, MODE_W * MODE_H));
    g_assert_cmpuint(pvdc_head_ctl(&t, 0, PVDC_HEAD_CRC_FRAME), ==, 2);

    /* Primary off: the frame after the commit is the background alone. */
    pvdc_wr_plane(&t, primary, PVDC_PS_CTRL, 0);
    pvdc_wr(&t, PVDC_HEAD_SHADOW(0) + PVDC_HS_BACKGROUND, 0x00123456);
    pvdc_doorbell(&t, 0);
    pvdc_step_to(&t, t0 + 3 * p0 - 1);
    g_assert_cmphex(pvdc_head_ctl(&t, 0, PVDC_HEAD_CRC_VALUE), ==,
                    pvdc_frame_crc(fb, MODE_W * MODE_H));
    pvdc_step_to(&t, t0 + 3 * p0);
    for (i = 0; i < MODE_W * MODE_H; i++) {
        fb[i] = 0x00123456;
    }
    g_assert_cmphex(pvdc_head_ctl(&t, 0, PVDC_HEAD_CRC_VALUE), ==,
                    pvdc_frame_crc(fb, MODE_W * MODE_H));
    g_assert_cmpuint(pvdc_head_ctl(&t, 0, PVDC_HEAD_CRC_FRAME), ==, 3);
    pvdc_test_stop(&t);
}

static void test_doorbell_overrun_keeps_the_armed_commit(void)
{
    const uint64_t p0 = pvdc_period_ns(CLOCK_1MS);
    PVDCTest t;
    int64_t t0;

    pvdc_test_start(&t, NULL);
    t0 = pvdc_enable_head(&t, 0, CLOCK_1MS);
    pvdc_wr(&t, PVDC_HEAD_SHADOW(0) + PVDC_HS_BACKGROUND, 0x111111);
    pvdc_doorbell(&t, 0);
    pvdc_wr(&t, PVDC_HEAD_SHADOW(0) + PVDC_HS_BACKGROUND, 0x222222);
    pvdc_doorbell(&t, 0);
    g_assert_cmpuint(pvdc_head_ctl(&t, 0, PVDC_HEAD_ARMED_SEQ), ==, 2);
    g_assert_cmphex(pvdc_head_ctl(&t, 0, PVDC_HEAD_STATUS), ==,
                    PVDC_HEAD_STATUS_DOORBELL_OVERRUN);

    /* A group with an armed member is ignored as a whole. */
    pvdc_wr(&t, PVDC_REG_MULTI_DOORBELL, BIT(0) | BIT(1));
    g_assert_cmphex(pvdc_rd(&t, PVDC_REG_MULTI_DOORBELL), ==, BIT(0));
    g_assert_cmpuint(pvdc_head_ctl(&t, 1, PVDC_HEAD_ARMED_SEQ), ==, 0);
    g_assert_cmphex(pvdc_head_ctl(&t, 1, PVDC_HEAD_STATUS), ==, 0);

    /* Doorbell values other than 1 do nothing. */
    pvdc_wr(&t, PVDC_HEAD_CONTROL(1) + PVDC_HEAD_DOORBELL, 0);
    pvdc_wr(&t, PVDC_HEAD_CONTROL(1) + PVDC_HEAD_DOORBELL, 3);
    g_assert_cmpuint(pvdc_head_ctl(&t, 1, PVDC_HEAD_ARMED_SEQ), ==, 0);

    pvdc_step_to(&t, t0 + p0);
    g_assert_cmphex(pvdc_rd(&t, PVDC_HEAD_ACTIVE(0) + PVDC_HS_BACKGROUND), ==,
                    0x111111);
    g_assert_cmpuint(pvdc_head_ctl(&t, 0, PVDC_HEAD_DONE_SEQ), ==, 2);
    /* RW1C, and it stays set across the commit. */
    g_assert_cmphex(pvdc_head_ctl(&t, 0, PVDC_HEAD_STATUS), ==,
                    PVDC_HEAD_STATUS_DOORBELL_OVERRUN);
    pvdc_wr(&t, PVDC_HEAD_CONTROL(0) + PVDC_HEAD_STATUS,
            PVDC_HEAD_STATUS_DOORBELL_OVERRUN);
    g_assert_cmphex(pvdc_head_ctl(&t, 0, PVDC_HEAD_STATUS), ==, 0);

    /* Once latched, the doorbell works again. */
    pvdc_doorbell(&t, 0);
    g_assert_cmpuint(pvdc_head_ctl(&t, 0, PVDC_HEAD_ARMED_SEQ), ==, 3);
    pvdc_step_to(&t, t0 + 2 * p0);
    g_assert_cmphex(pvdc_rd(&t, PVDC_HEAD_ACTIVE(0) + PVDC_HS_BACKGROUND), ==,
                    0x222222);
    pvdc_test_stop(&t);
}

static void amend(PVDCTest *t, unsigned int head)
{
    pvdc_wr(t, PVDC_HEAD_CONTROL(head) + PVDC_HEAD_DOORBELL,
            PVDC_DOORBELL_AMEND);
}

static void test_amend_joins_the_armed_commit(void)
{
    const uint64_t p0 = pvdc_period_ns(CLOCK_1MS);
    const uint64_t p1 = pvdc_period_ns(CLOCK_2MS);
    unsigned int cursor;
    PVDCTest t;
    int64_t t0, t1;

    pvdc_test_start(&t, NULL);
    t0 = pvdc_enable_head(&t, 0, CLOCK_1MS);
    cursor = pvdc_cursor_of(&t, 0);
    pvdc_rd(&t, PVDC_REG_INT_ACK);

    /* With nothing armed, an amend is a doorbell. */
    pvdc_wr(&t, PVDC_HEAD_SHADOW(0) + PVDC_HS_BACKGROUND, 0x111111);
    amend(&t, 0);
    g_assert_cmpuint(pvdc_head_ctl(&t, 0, PVDC_HEAD_ARMED_SEQ), ==, 2);
    g_assert_cmpuint(pvdc_head_ctl(&t, 0, PVDC_HEAD_DOORBELL), ==, 1);

    /* Armed: the later state joins it, latched at the same vblank. */
    pvdc_step_to(&t, t0 + p0 / 2);
    pvdc_wr(&t, PVDC_HEAD_SHADOW(0) + PVDC_HS_BACKGROUND, 0x222222);
    pvdc_wr_plane(&t, cursor, PVDC_PS_FORMAT, PVDC_FMT_ARGB8888);
    pvdc_wr_plane(&t, cursor, PVDC_PS_FB_PITCH, MODE_PITCH);
    pvdc_wr_plane(&t, cursor, PVDC_PS_FB_SIZE, PVDC_XY(16, 16));
    pvdc_wr_plane(&t, cursor, PVDC_PS_SRC_W, FP16(16));
    pvdc_wr_plane(&t, cursor, PVDC_PS_SRC_H, FP16(16));
    pvdc_wr_plane(&t, cursor, PVDC_PS_DST_SIZE, PVDC_XY(16, 16));
    pvdc_wr_plane(&t, cursor, PVDC_PS_DST_POS, PVDC_XY(5, 7));
    pvdc_wr_plane(&t, cursor, PVDC_PS_ZPOS, 1);
    pvdc_wr_plane(&t, cursor, PVDC_PS_CTRL, PVDC_PS_CTRL_ENABLE);
    amend(&t, 0);
    pvdc_wr_plane(&t, cursor, PVDC_PS_DST_POS, PVDC_XY(9, 11));
    amend(&t, 0);
    g_assert_cmpuint(pvdc_head_ctl(&t, 0, PVDC_HEAD_ARMED_SEQ), ==, 4);
    g_assert_cmphex(pvdc_head_ctl(&t, 0, PVDC_HEAD_STATUS), ==, 0);
    pvdc_step_to(&t, t0 + p0 - 1);
    g_assert_cmphex(pvdc_rd(&t, PVDC_HEAD_ACTIVE(0) + PVDC_HS_BACKGROUND), ==,
                    0);
    g_assert_cmphex(pvdc_rd(&t, PVDC_REG_INT_STATUS), ==, 0);
    pvdc_step_to(&t, t0 + p0);
    g_assert_cmphex(pvdc_rd(&t, PVDC_HEAD_ACTIVE(0) + PVDC_HS_BACKGROUND), ==,
                    0x222222);
    g_assert_cmphex(pvdc_rd(&t, PVDC_PLANE_ACTIVE(cursor) + PVDC_PS_DST_POS),
                    ==, PVDC_XY(9, 11));
    g_assert_cmpuint(pvdc_head_ctl(&t, 0, PVDC_HEAD_DONE_SEQ), ==, 4);
    g_assert_cmphex(pvdc_head_ctl(&t, 0, PVDC_HEAD_RESULT), ==,
                    PVDC_RESULT_APPLIED);
    g_assert_cmphex(pvdc_rd(&t, PVDC_REG_INT_ACK), ==,
                    PVDC_INT(0, PVDC_INT_COMMIT_DONE));

    /* A group member amended keeps the group's (later) latch point. */
    t1 = pvdc_enable_head(&t, 1, CLOCK_2MS);
    pvdc_rd(&t, PVDC_REG_INT_ACK);
    pvdc_wr(&t, PVDC_HEAD_SHADOW(0) + PVDC_HS_BACKGROUND, 0x333333);
    pvdc_wr(&t, PVDC_REG_MULTI_DOORBELL, BIT(0) | BIT(1));
    pvdc_wr(&t, PVDC_HEAD_SHADOW(0) + PVDC_HS_BACKGROUND, 0x444444);
    amend(&t, 0);
    pvdc_step_to(&t, t1 + p1 - 1);
    g_assert_cmphex(pvdc_rd(&t, PVDC_HEAD_ACTIVE(0) + PVDC_HS_BACKGROUND), ==,
                    0x222222);
    pvdc_step_to(&t, t1 + p1);
    g_assert_cmphex(pvdc_rd(&t, PVDC_HEAD_ACTIVE(0) + PVDC_HS_BACKGROUND), ==,
                    0x444444);
    g_assert_cmphex(pvdc_rd(&t, PVDC_REG_INT_ACK), ==,
                    PVDC_INT(0, PVDC_INT_COMMIT_DONE) |
                    PVDC_INT(1, PVDC_INT_COMMIT_DONE));
    g_assert_cmpuint(pvdc_head_ctl(&t, 0, PVDC_HEAD_DONE_SEQ), ==,
                     pvdc_head_ctl(&t, 0, PVDC_HEAD_ARMED_SEQ));
    pvdc_test_stop(&t);
}

/*
 * A group's commit carries each plane once.  Rebound to another member of
 * the group and amended there, a plane leaves the commit of the member
 * that carried it: the group shows it where the amending head's commit
 * says, whichever member carried it first.
 */
static void test_amend_moves_a_plane_within_its_group(void)
{
    static const unsigned int orders[][2] = { { 1, 0 }, { 0, 1 } };

    for (int i = 0; i < ARRAY_SIZE(orders); i++) {
        unsigned int from = orders[i][0], to = orders[i][1];
        unsigned int ov;
        PVDCTest t;

        pvdc_test_start(&t, RULE_PROPS);
        ov = pvdc_plane_of(&t, 0, OVERLAY(0));
        pvdc_enable_head(&t, 0, CLOCK_1MS);
        pvdc_enable_head(&t, 1, CLOCK_1MS);
        (void)pvdc_rd(&t, PVDC_REG_INT_ACK);

        /* The overlay on @from, in a commit of both heads... */
        pvdc_write_plane(&t, ov, from, 0, 1);
        pvdc_shrink_plane(&t, ov);
        pvdc_wr_plane(&t, ov, PVDC_PS_DST_POS, PVDC_XY(3, 5));
        pvdc_wr(&t, PVDC_REG_MULTI_DOORBELL, BIT(0) | BIT(1));
        /* ...rebound to @to and amended there before the latch. */
        pvdc_wr_plane(&t, ov, PVDC_PS_HEAD, to);
        pvdc_wr_plane(&t, ov, PVDC_PS_DST_POS, PVDC_XY(20, 30));
        amend(&t, to);
        g_assert_cmphex(pvdc_wait_outcome(&t, 0, 2 * SCALE_MS), ==,
                        PVDC_RESULT_APPLIED);
        g_assert_cmphex(pvdc_head_ctl(&t, 1, PVDC_HEAD_RESULT), ==,
                        PVDC_RESULT_APPLIED);
        g_assert_cmpuint(pvdc_rd(&t, PVDC_PLANE_ACTIVE(ov) + PVDC_PS_HEAD), ==,
                         to);
        g_assert_cmphex(pvdc_rd(&t, PVDC_PLANE_ACTIVE(ov) + PVDC_PS_DST_POS),
                        ==, PVDC_XY(20, 30));

        /* Shown on @to now, it moves back the same way. */
        pvdc_wr(&t, PVDC_REG_MULTI_DOORBELL, BIT(0) | BIT(1));
        pvdc_wr_plane(&t, ov, PVDC_PS_HEAD, from);
        pvdc_wr_plane(&t, ov, PVDC_PS_DST_POS, PVDC_XY(7, 9));
        amend(&t, from);
        g_assert_cmphex(pvdc_wait_outcome(&t, 0, 2 * SCALE_MS), ==,
                        PVDC_RESULT_APPLIED);
        g_assert_cmphex(pvdc_head_ctl(&t, 1, PVDC_HEAD_RESULT), ==,
                        PVDC_RESULT_APPLIED);
        g_assert_cmpuint(pvdc_rd(&t, PVDC_PLANE_ACTIVE(ov) + PVDC_PS_HEAD), ==,
                         from);
        g_assert_cmphex(pvdc_rd(&t, PVDC_PLANE_ACTIVE(ov) + PVDC_PS_DST_POS),
                        ==, PVDC_XY(7, 9));
        pvdc_test_stop(&t);
    }
}

static void test_reset_during_armed_commit(void)
{
    const uint64_t p0 = pvdc_period_ns(CLOCK_1MS);
    uint64_t callbacks;
    PVDCTest t;
    int64_t t0;

    pvdc_test_start(&t, NULL);
    /* chroma registers an RGB plane ignores: still active, and reset */
    pvdc_wr_plane(&t, 0, PVDC_PS_CHROMA_OFFSET, 0x40);
    pvdc_wr_plane(&t, 0, PVDC_PS_CHROMA_PITCH, 0xffffffc0);
    t0 = pvdc_enable_head(&t, 0, CLOCK_1MS);
    g_assert_cmphex(pvdc_rd(&t, PVDC_PLANE_ACTIVE(0) + PVDC_PS_CHROMA_PITCH),
                    ==, 0xffffffc0);
    pvdc_wr(&t, PVDC_REG_INT_ENABLE, PVDC_INT(0, PVDC_INT_VBLANK));
    pvdc_wr(&t, PVDC_HEAD_SHADOW(0) + PVDC_HS_BACKGROUND, 0x333333);
    pvdc_doorbell(&t, 0);
    pvdc_wr(&t, PVDC_HEAD_SHADOW(1) + PVDC_HS_CTRL, 0);
    pvdc_step_to(&t, t0 + p0 / 2);

    qtest_system_reset(t.qts);
    pvdc_test_detach(&t);
    pvdc_test_attach(&t, t.qts);
    pvdc_assert_reset_state(&t);

    callbacks = pvdc_timer_callbacks(&t);
    pvdc_step_to(&t, t0 + 20 * p0);
    pvdc_assert_reset_state(&t);
    g_assert_cmpuint(pvdc_timer_callbacks(&t), ==, callbacks);

    /* And the device works after it. */
    t0 = pvdc_enable_head(&t, 0, CLOCK_1MS);
    g_assert_cmpuint(pvdc_head_ctl(&t, 0, PVDC_HEAD_ARMED_SEQ), ==, 1);
    pvdc_test_stop(&t);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);

    qtest_add_func("/pvdc/commit/shadow-writes-without-doorbell-change-nothing",
                   test_shadow_writes_without_doorbell_change_nothing);
    qtest_add_func("/pvdc/commit/applies-exactly-at-the-next-vblank",
                   test_commit_applies_exactly_at_next_vblank);
    qtest_add_func("/pvdc/commit/active-windows-ignore-writes",
                   test_writes_to_active_windows_are_ignored);
    qtest_add_func("/pvdc/commit/disabled-head-latches-at-once",
                   test_disabled_head_commit_latches_at_once);

    qtest_add_func("/pvdc/crc/follows-the-active-frame",
                   test_crc_follows_the_active_frame);
    qtest_add_func("/pvdc/doorbell/overrun-keeps-the-armed-commit",
                   test_doorbell_overrun_keeps_the_armed_commit);
    qtest_add_func("/pvdc/doorbell/amend-joins-the-armed-commit",
                   test_amend_joins_the_armed_commit);
    qtest_add_func("/pvdc/doorbell/amend-moves-a-plane-within-its-group",
                   test_amend_moves_a_plane_within_its_group);
    qtest_add_func("/pvdc/reset/during-an-armed-commit-cancels-it",
                   test_reset_during_armed_commit);

    return g_test_run();
}
