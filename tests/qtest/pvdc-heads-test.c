/*
 * QTest cases for pvdc's heads: heads at different refresh rates, commit
 * groups that are all or nothing and touch no other head, modesets (timings
 * only through disable and enable, the first vblank of a new timeline, the
 * link-up delay, a stalled device) and the routing of heads to connectors.
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

static void test_heads_are_independent(void)
{
    const uint64_t p0 = pvdc_period_ns(CLOCK_1MS);
    const uint64_t p1 = pvdc_period_ns(CLOCK_2MS);
    int64_t t0, t1, arm, v0;
    PVDCTest t;

    pvdc_test_start(&t, NULL);
    t0 = pvdc_enable_head(&t, 0, CLOCK_1MS);
    pvdc_step_to(&t, t0 + p0 / 2);
    t1 = pvdc_enable_head(&t, 1, CLOCK_2MS);
    g_assert_cmpuint(pvdc_head_ctl(&t, 0, PVDC_HEAD_FRAME_PERIOD), ==, p0);
    g_assert_cmpuint(pvdc_head_ctl(&t, 1, PVDC_HEAD_FRAME_PERIOD), ==, p1);

    /* Armed together, each latches at its own next vblank. */
    arm = t1 + p1 + p1 / 8;
    pvdc_step_to(&t, arm);
    pvdc_wr(&t, PVDC_HEAD_SHADOW(0) + PVDC_HS_BACKGROUND, 0x000000ff);
    pvdc_wr(&t, PVDC_HEAD_SHADOW(1) + PVDC_HS_BACKGROUND, 0x0000ff00);
    pvdc_doorbell(&t, 0);
    pvdc_doorbell(&t, 1);
    /* head 0: vblanks at t0 + n * p0; head 1 at t1 + n * p1 */
    v0 = t0 + ((arm - t0) / p0 + 1) * p0;
    g_assert_cmpint(v0, <, t1 + 2 * p1);
    pvdc_step_to(&t, v0 - 1);
    g_assert_cmpuint(pvdc_head_ctl(&t, 0, PVDC_HEAD_DOORBELL), ==, 1);
    pvdc_step_to(&t, v0);
    g_assert_cmpuint(pvdc_head_ctl(&t, 0, PVDC_HEAD_DOORBELL), ==, 0);
    g_assert_cmphex(pvdc_rd(&t, PVDC_HEAD_ACTIVE(0) + PVDC_HS_BACKGROUND), ==,
                    0xff);
    g_assert_cmpuint(pvdc_head_ctl(&t, 1, PVDC_HEAD_DOORBELL), ==, 1);
    g_assert_cmphex(pvdc_rd(&t, PVDC_HEAD_ACTIVE(1) + PVDC_HS_BACKGROUND), ==,
                    0);
    pvdc_step_to(&t, t1 + 2 * p1 - 1);
    g_assert_cmpuint(pvdc_head_ctl(&t, 1, PVDC_HEAD_DOORBELL), ==, 1);
    pvdc_step_to(&t, t1 + 2 * p1);
    g_assert_cmphex(pvdc_rd(&t, PVDC_HEAD_ACTIVE(1) + PVDC_HS_BACKGROUND), ==,
                    0xff00);
    g_assert_cmpuint(pvdc_head_ctl(&t, 0, PVDC_HEAD_VBLANK_COUNT), ==,
                     (t1 + 2 * p1 - t0) / p0);
    g_assert_cmpuint(pvdc_head_ctl(&t, 1, PVDC_HEAD_VBLANK_COUNT), ==, 2);
    /* A rejected commit on head 1 does not touch head 0. */
    pvdc_wr(&t, PVDC_HEAD_SHADOW(1) + PVDC_HS_PIXEL_CLOCK, CLOCK_1MS);
    pvdc_doorbell(&t, 1);
    g_assert_cmphex(pvdc_wait_outcome(&t, 1, p1), ==,
                    pvdc_head_result(PVDC_ERR_MODESET_REQUIRED));
    g_assert_cmphex(pvdc_head_ctl(&t, 0, PVDC_HEAD_RESULT), ==,
                    PVDC_RESULT_APPLIED);
    pvdc_test_stop(&t);
}

/*
 * A head's active state only changes at a latch point of a group it
 * belongs to: a commit of head 0 cannot take, disable or move a plane that
 * head 1 shows; a commit of both heads can move it, atomically for both.
 */
static void test_commit_never_changes_a_head_outside_its_group(void)
{
    unsigned int ov;
    PVDCSnapshot before;
    uint32_t seq1;
    PVDCTest t;

    pvdc_test_start(&t, RULE_PROPS);
    ov = pvdc_plane_of(&t, 0, OVERLAY(0));
    pvdc_enable_head(&t, 0, CLOCK_1MS);
    pvdc_enable_head(&t, 1, CLOCK_1MS);
    pvdc_write_plane(&t, ov, 1, 0, 1);
    pvdc_shrink_plane(&t, ov);
    g_assert_cmphex(pvdc_commit(&t, 1), ==, PVDC_RESULT_APPLIED);
    (void)pvdc_rd(&t, PVDC_REG_INT_ACK);
    pvdc_snapshot_active(&t, &before);
    seq1 = pvdc_head_ctl(&t, 1, PVDC_HEAD_DONE_SEQ);

    /* Disabled through head 0: refused, and head 1 hears nothing. */
    pvdc_wr_plane(&t, ov, PVDC_PS_HEAD, 0);
    pvdc_wr_plane(&t, ov, PVDC_PS_CTRL, 0);
    g_assert_cmphex(pvdc_commit(&t, 0), ==,
                    pvdc_result_of(PVDC_ERR_PLANE_BUSY, ov));
    pvdc_assert_active_is(&t, &before);
    g_assert_cmpuint(pvdc_head_ctl(&t, 1, PVDC_HEAD_DONE_SEQ), ==, seq1);
    g_assert_cmphex(pvdc_rd(&t, PVDC_REG_INT_ACK), ==,
                    PVDC_INT(0, PVDC_INT_COMMIT_REJECTED));

    /* Enabled through head 0: refused too. */
    pvdc_wr_plane(&t, ov, PVDC_PS_CTRL, PVDC_PS_CTRL_ENABLE);
    g_assert_cmphex(pvdc_commit(&t, 0), ==,
                    pvdc_result_of(PVDC_ERR_PLANE_BUSY, ov));
    pvdc_assert_active_is(&t, &before);

    /* Through both heads in one group: it moves. */
    pvdc_wr(&t, PVDC_REG_MULTI_DOORBELL, BIT(0) | BIT(1));
    g_assert_cmphex(pvdc_wait_outcome(&t, 0, 2 * SCALE_MS), ==,
                    PVDC_RESULT_APPLIED);
    g_assert_cmphex(pvdc_head_ctl(&t, 1, PVDC_HEAD_RESULT), ==,
                    PVDC_RESULT_APPLIED);
    g_assert_cmphex(pvdc_rd(&t, PVDC_PLANE_ACTIVE(ov) + PVDC_PS_HEAD), ==, 0);
    g_assert_cmphex(pvdc_rd(&t, PVDC_PLANE_ACTIVE(ov) + PVDC_PS_CTRL), ==,
                    PVDC_PS_CTRL_ENABLE);

    /* Back to head 1 disabled, in one group: allowed as well. */
    pvdc_wr_plane(&t, ov, PVDC_PS_HEAD, 1);
    pvdc_wr_plane(&t, ov, PVDC_PS_CTRL, 0);
    pvdc_wr(&t, PVDC_REG_MULTI_DOORBELL, BIT(0) | BIT(1));
    g_assert_cmphex(pvdc_wait_outcome(&t, 1, 2 * SCALE_MS), ==,
                    PVDC_RESULT_APPLIED);
    g_assert_cmphex(pvdc_rd(&t, PVDC_PLANE_ACTIVE(ov) + PVDC_PS_CTRL), ==, 0);

    /* Shown by nobody, it goes through any head's commit. */
    pvdc_wr_plane(&t, ov, PVDC_PS_HEAD, 0);
    g_assert_cmphex(pvdc_commit(&t, 0), ==, PVDC_RESULT_APPLIED);
    g_assert_cmphex(pvdc_rd(&t, PVDC_PLANE_ACTIVE(ov) + PVDC_PS_HEAD), ==, 0);
    pvdc_test_stop(&t);
}

static void test_multi_head_commit_is_all_or_none(void)
{
    const uint64_t p0 = pvdc_period_ns(CLOCK_1MS);
    const uint64_t p1 = pvdc_period_ns(CLOCK_2MS);
    PVDCSnapshot before;
    int64_t t0, t1;
    PVDCTest t;

    pvdc_test_start(&t, NULL);
    t0 = pvdc_enable_head(&t, 0, CLOCK_1MS);
    pvdc_step_to(&t, t0 + p0 / 4);
    t1 = pvdc_enable_head(&t, 1, CLOCK_2MS);
    pvdc_snapshot_active(&t, &before);

    /* Nonexistent heads in the mask: the whole write is ignored. */
    pvdc_wr(&t, PVDC_REG_MULTI_DOORBELL, BIT(0) | BIT(t.heads));
    pvdc_wr(&t, PVDC_REG_MULTI_DOORBELL, 0);
    g_assert_cmphex(pvdc_rd(&t, PVDC_REG_MULTI_DOORBELL), ==, 0);

    /* Both valid: the group latches at the later of the two vblanks. */
    pvdc_wr(&t, PVDC_HEAD_SHADOW(0) + PVDC_HS_BACKGROUND, 0x000000ff);
    pvdc_wr(&t, PVDC_HEAD_SHADOW(1) + PVDC_HS_BACKGROUND, 0x0000ff00);
    pvdc_wr(&t, PVDC_REG_MULTI_DOORBELL, BIT(0) | BIT(1));
    g_assert_cmphex(pvdc_rd(&t, PVDC_REG_MULTI_DOORBELL), ==, BIT(0) | BIT(1));
    g_assert_cmpuint(pvdc_head_ctl(&t, 0, PVDC_HEAD_ARMED_SEQ), ==, 2);
    g_assert_cmpuint(pvdc_head_ctl(&t, 1, PVDC_HEAD_ARMED_SEQ), ==, 2);
    pvdc_step_to(&t, t0 + ((t1 - t0) / p0 + 1) * p0);
    pvdc_assert_active_is(&t, &before);
    pvdc_step_to(&t, t1 + p1 - 1);
    pvdc_assert_active_is(&t, &before);
    pvdc_step_to(&t, t1 + p1);
    g_assert_cmphex(pvdc_rd(&t, PVDC_HEAD_ACTIVE(0) + PVDC_HS_BACKGROUND), ==,
                    0xff);
    g_assert_cmphex(pvdc_rd(&t, PVDC_HEAD_ACTIVE(1) + PVDC_HS_BACKGROUND), ==,
                    0xff00);
    g_assert_cmphex(pvdc_head_ctl(&t, 0, PVDC_HEAD_RESULT), ==,
                    PVDC_RESULT_APPLIED);
    g_assert_cmphex(pvdc_head_ctl(&t, 1, PVDC_HEAD_RESULT), ==,
                    PVDC_RESULT_APPLIED);
    g_assert_cmphex(pvdc_rd(&t, PVDC_REG_INT_ACK), ==,
                    PVDC_INT(0, PVDC_INT_COMMIT_DONE) |
                    PVDC_INT(1, PVDC_INT_COMMIT_DONE));

    /* Head 1 breaks a rule: neither head changes. */
    pvdc_snapshot_active(&t, &before);
    pvdc_wr(&t, PVDC_HEAD_SHADOW(0) + PVDC_HS_BACKGROUND, 0x00ff0000);
    pvdc_wr_plane(&t, pvdc_plane_of(&t, 1, PRIMARY), PVDC_PS_FB_PITCH, 4);
    pvdc_wr(&t, PVDC_REG_MULTI_DOORBELL, BIT(0) | BIT(1));
    g_assert_cmphex(pvdc_wait_outcome(&t, 1, 2 * p1), ==,
                    pvdc_result_of(PVDC_ERR_PITCH,
                                   pvdc_plane_of(&t, 1, PRIMARY)));
    g_assert_cmphex(pvdc_wait_outcome(&t, 0, 0), ==,
                    pvdc_head_result(PVDC_ERR_GROUP));
    pvdc_assert_active_is(&t, &before);
    g_assert_cmphex(pvdc_rd(&t, PVDC_REG_INT_ACK), ==,
                    PVDC_INT(0, PVDC_INT_COMMIT_REJECTED) |
                    PVDC_INT(1, PVDC_INT_COMMIT_REJECTED));
    pvdc_test_stop(&t);
}

static void test_timings_change_only_through_disable_enable(void)
{
    const uint64_t p0 = pvdc_period_ns(CLOCK_1MS);
    const uint64_t p1 = pvdc_period_ns(CLOCK_2MS);
    unsigned int primary;
    int64_t t0, off, on;
    PVDCTest t;

    pvdc_test_start(&t, NULL);
    primary = pvdc_plane_of(&t, 0, PRIMARY);
    t0 = pvdc_enable_head(&t, 0, CLOCK_1MS);

    /* Directly: refused. */
    pvdc_wr(&t, PVDC_HEAD_SHADOW(0) + PVDC_HS_PIXEL_CLOCK, CLOCK_2MS);
    pvdc_doorbell(&t, 0);
    g_assert_cmphex(pvdc_wait_outcome(&t, 0, p0), ==,
                    pvdc_head_result(PVDC_ERR_MODESET_REQUIRED));
    g_assert_cmpuint(pvdc_head_ctl(&t, 0, PVDC_HEAD_FRAME_PERIOD), ==, p0);

    /* Disable at a vblank: the counter stops there. */
    pvdc_step_to(&t, t0 + 5 * p0 + p0 / 2);
    pvdc_wr(&t, PVDC_HEAD_SHADOW(0) + PVDC_HS_CTRL, 0);
    pvdc_wr_plane(&t, primary, PVDC_PS_CTRL, 0);
    pvdc_doorbell(&t, 0);
    off = t0 + 6 * p0;
    g_assert_cmphex(pvdc_wait_outcome(&t, 0, p0), ==, PVDC_RESULT_APPLIED);
    g_assert_cmpint(pvdc_now_ns(&t), ==, off);
    g_assert_cmpuint(pvdc_head_ctl(&t, 0, PVDC_HEAD_FRAME_PERIOD), ==, 0);
    pvdc_step_to(&t, off + 10 * p0);
    g_assert_cmpuint(pvdc_head_ctl(&t, 0, PVDC_HEAD_VBLANK_COUNT), ==, 6);
    g_assert_cmpuint(pvdc_head_ctl(&t, 0, PVDC_HEAD_VBLANK_TIME_LO), ==, off);

    /*
     * Enable with the new clock: a frame of it later, a new timeline; the
     * count goes on.
     */
    pvdc_write_mode(&t, 0, CLOCK_2MS);
    pvdc_wr_plane(&t, primary, PVDC_PS_CTRL, PVDC_PS_CTRL_ENABLE);
    on = pvdc_commit_enable(&t, 0);
    g_assert_cmpint(on, ==, off + 10 * p0 + p1);
    g_assert_cmpuint(pvdc_head_ctl(&t, 0, PVDC_HEAD_FRAME_PERIOD), ==, p1);
    g_assert_cmphex(pvdc_rd(&t, PVDC_HEAD_ACTIVE(0) + PVDC_HS_PIXEL_CLOCK), ==,
                    CLOCK_2MS);
    pvdc_step_to(&t, on + 3 * p1 - 1);
    g_assert_cmpuint(pvdc_head_ctl(&t, 0, PVDC_HEAD_VBLANK_COUNT), ==, 6 + 2);
    pvdc_step_to(&t, on + 3 * p1);
    g_assert_cmpuint(pvdc_head_ctl(&t, 0, PVDC_HEAD_VBLANK_COUNT), ==, 6 + 3);
    g_assert_cmpuint(pvdc_head_ctl(&t, 0, PVDC_HEAD_VBLANK_TIME_LO), ==,
                     on + 3 * p1);
    pvdc_test_stop(&t);
}

static void test_link_up_delay_is_respected(void)
{
    const uint64_t delay = 5 * SCALE_MS, p0 = pvdc_period_ns(CLOCK_1MS);
    int64_t arm, t0;
    PVDCTest t;

    pvdc_test_start(&t, "x-link-up-delay-ms=5");
    pvdc_step_to(&t, 123456);
    arm = pvdc_now_ns(&t);
    pvdc_write_mode(&t, 0, CLOCK_1MS);
    pvdc_write_plane(&t, pvdc_plane_of(&t, 0, PRIMARY), 0, 0, 0);
    pvdc_doorbell(&t, 0);
    pvdc_step_to(&t, arm + delay - 1);
    g_assert_cmpuint(pvdc_head_ctl(&t, 0, PVDC_HEAD_DOORBELL), ==, 1);
    g_assert_cmphex(pvdc_rd(&t, PVDC_HEAD_ACTIVE(0) + PVDC_HS_CTRL), ==, 0);
    pvdc_step_to(&t, arm + delay);
    g_assert_cmpuint(pvdc_head_ctl(&t, 0, PVDC_HEAD_DOORBELL), ==, 0);
    g_assert_cmphex(pvdc_rd(&t, PVDC_HEAD_ACTIVE(0) + PVDC_HS_CTRL), ==,
                    PVDC_HS_CTRL_ENABLE);
    g_assert_cmpuint(pvdc_head_ctl(&t, 0, PVDC_HEAD_VBLANK_TIME_LO), ==,
                     arm + delay);
    t0 = arm + delay;

    /* In a group with an enabled head, the group waits for the link. */
    pvdc_step_to(&t, t0 + p0 / 2);
    arm = pvdc_now_ns(&t);
    pvdc_wr(&t, PVDC_HEAD_SHADOW(0) + PVDC_HS_BACKGROUND, 0x00abcdef);
    pvdc_write_mode(&t, 1, CLOCK_1MS);
    pvdc_write_plane(&t, pvdc_plane_of(&t, 1, PRIMARY), 1, 0, 0);
    pvdc_wr(&t, PVDC_REG_MULTI_DOORBELL, BIT(0) | BIT(1));
    pvdc_step_to(&t, arm + delay - 1);
    g_assert_cmphex(pvdc_rd(&t, PVDC_REG_MULTI_DOORBELL), ==, BIT(0) | BIT(1));
    g_assert_cmphex(pvdc_rd(&t, PVDC_HEAD_ACTIVE(0) + PVDC_HS_BACKGROUND), ==,
                    0);
    pvdc_step_to(&t, arm + delay);
    g_assert_cmphex(pvdc_rd(&t, PVDC_REG_MULTI_DOORBELL), ==, 0);
    g_assert_cmphex(pvdc_rd(&t, PVDC_HEAD_ACTIVE(0) + PVDC_HS_BACKGROUND), ==,
                    0x00abcdef);
    g_assert_cmphex(pvdc_rd(&t, PVDC_HEAD_ACTIVE(1) + PVDC_HS_CTRL), ==,
                    PVDC_HS_CTRL_ENABLE);
    pvdc_test_stop(&t);
}

static void test_stalled_device_latches_nothing_until_released(void)
{
    const uint64_t p0 = pvdc_period_ns(CLOCK_1MS);
    uint32_t count;
    int64_t t0;
    PVDCTest t;

    pvdc_test_start(&t, NULL);
    pvdc_step_to(&t, 1000);
    t0 = pvdc_enable_head(&t, 0, CLOCK_1MS);
    pvdc_qom_set_bool(t.qts, "x-stall", true);
    pvdc_wr(&t, PVDC_HEAD_SHADOW(0) + PVDC_HS_BACKGROUND, 0x00abcdef);
    pvdc_doorbell(&t, 0);
    count = pvdc_head_ctl(&t, 0, PVDC_HEAD_VBLANK_COUNT);

    /* Armed, and never latched; vblanks go on. */
    pvdc_step_to(&t, t0 + 10 * p0 + p0 / 2);
    g_assert_cmpuint(pvdc_head_ctl(&t, 0, PVDC_HEAD_DOORBELL), ==, 1);
    g_assert_cmphex(pvdc_rd(&t, PVDC_HEAD_ACTIVE(0) + PVDC_HS_BACKGROUND), ==,
                    0);
    g_assert_cmpuint(pvdc_head_ctl(&t, 0, PVDC_HEAD_VBLANK_COUNT), ==,
                     count + 10);

    /* Released, it latches what fell due. */
    pvdc_qom_set_bool(t.qts, "x-stall", false);
    pvdc_step_next(&t);
    g_assert_cmpuint(pvdc_head_ctl(&t, 0, PVDC_HEAD_DOORBELL), ==, 0);
    g_assert_cmphex(pvdc_head_ctl(&t, 0, PVDC_HEAD_RESULT), ==,
                    PVDC_RESULT_APPLIED);
    g_assert_cmphex(pvdc_rd(&t, PVDC_HEAD_ACTIVE(0) + PVDC_HS_BACKGROUND), ==,
                    0x00abcdef);
    pvdc_test_stop(&t);
}

/*
 * An enable is armed at its doorbell and latches one frame of its new mode
 * later, at the first vblank of the head's new timeline (a link-up delay
 * shorter than that frame adds nothing): until then the head is off and
 * nothing is reported, whatever the guest reads or amends; there the
 * device's own timer applies it and raises COMMIT_DONE.
 */
static void test_enable_latches_at_the_first_vblank(void)
{
    const uint64_t p1 = pvdc_period_ns(CLOCK_2MS);
    const uint32_t done0 = PVDC_INT(0, PVDC_INT_COMMIT_DONE);
    unsigned int primary;
    PVDCTest t;
    int64_t arm;
    int gsi;

    pvdc_test_start(&t, "x-link-up-delay-ms=1");
    qtest_irq_intercept_in(t.qts, "ioapic");
    primary = pvdc_plane_of(&t, 0, PRIMARY);
    pvdc_enable_head(&t, 1, CLOCK_1MS);
    gsi = pvdc_find_intx_gsi(&t);
    pvdc_wr(&t, PVDC_REG_INT_STATUS, pvdc_rd(&t, PVDC_REG_INT_STATUS));
    pvdc_wr(&t, PVDC_REG_INT_ENABLE, done0);

    pvdc_step_to(&t, 1234567);
    arm = pvdc_now_ns(&t);
    pvdc_write_mode(&t, 0, CLOCK_2MS);
    pvdc_write_plane(&t, primary, 0, 0, 0);
    pvdc_doorbell(&t, 0);
    for (int64_t when = arm; when < arm + p1; when += p1 / 2 - 1) {
        pvdc_step_to(&t, when);
        g_assert_false(qtest_get_irq(t.qts, gsi));
        g_assert_cmpuint(pvdc_head_ctl(&t, 0, PVDC_HEAD_DOORBELL), ==, 1);
        g_assert_cmpuint(pvdc_head_ctl(&t, 0, PVDC_HEAD_DONE_SEQ), ==, 0);
        g_assert_cmphex(pvdc_rd(&t, PVDC_REG_INT_STATUS), ==, 0);
        g_assert_cmphex(pvdc_rd(&t, PVDC_HEAD_ACTIVE(0) + PVDC_HS_CTRL), ==, 0);
        g_assert_cmphex(pvdc_rd(&t, PVDC_PLANE_ACTIVE(primary) + PVDC_PS_CTRL),
                        ==, 0);
        g_assert_cmpuint(pvdc_head_ctl(&t, 0, PVDC_HEAD_FRAME_PERIOD), ==, 0);
        g_assert_cmpuint(pvdc_vblank_time(&t, 0), ==, 0);
    }
    /* An amend joins the enable and keeps its latch point. */
    pvdc_wr_head(&t, 0, PVDC_HS_BACKGROUND, 0x00abcdef);
    pvdc_wr(&t, PVDC_HEAD_CONTROL(0) + PVDC_HEAD_DOORBELL, PVDC_DOORBELL_AMEND);
    pvdc_step_to(&t, arm + p1 - 1);
    g_assert_false(qtest_get_irq(t.qts, gsi));
    g_assert_cmpuint(pvdc_head_ctl(&t, 0, PVDC_HEAD_DOORBELL), ==, 1);

    /* The timer latches it, before any register access. */
    pvdc_step_to(&t, arm + p1);
    g_assert_true(qtest_get_irq(t.qts, gsi));
    g_assert_cmphex(pvdc_rd(&t, PVDC_REG_INT_STATUS), ==, done0);
    g_assert_cmphex(pvdc_wait_outcome(&t, 0, 0), ==, PVDC_RESULT_APPLIED);
    g_assert_cmpuint(pvdc_head_ctl(&t, 0, PVDC_HEAD_DONE_SEQ), ==, 2);
    g_assert_cmphex(pvdc_rd(&t, PVDC_HEAD_ACTIVE(0) + PVDC_HS_CTRL), ==,
                    PVDC_HS_CTRL_ENABLE);
    g_assert_cmphex(pvdc_rd(&t, PVDC_HEAD_ACTIVE(0) + PVDC_HS_BACKGROUND), ==,
                    0x00abcdef);
    g_assert_cmpuint(pvdc_head_ctl(&t, 0, PVDC_HEAD_FRAME_PERIOD), ==, p1);

    /* The timeline starts there: the enable's frame is its vblank 0. */
    g_assert_cmpuint(pvdc_head_ctl(&t, 0, PVDC_HEAD_DONE_FRAME), ==, 0);
    g_assert_cmpuint(pvdc_head_ctl(&t, 0, PVDC_HEAD_VBLANK_COUNT), ==, 0);
    g_assert_cmpuint(pvdc_vblank_time(&t, 0), ==, arm + p1);
    pvdc_step_to(&t, arm + 2 * p1 - 1);
    g_assert_cmpuint(pvdc_head_ctl(&t, 0, PVDC_HEAD_VBLANK_COUNT), ==, 0);
    pvdc_step_to(&t, arm + 2 * p1);
    g_assert_cmpuint(pvdc_head_ctl(&t, 0, PVDC_HEAD_VBLANK_COUNT), ==, 1);
    g_assert_cmpuint(pvdc_vblank_time(&t, 0), ==, arm + 2 * p1);
    pvdc_test_stop(&t);
}

/* The shadow state of @head enabled on @connector with its primary plane. */
static void write_routed_head(PVDCTest *t, unsigned int head,
                              uint32_t connector)
{
    pvdc_write_mode(t, head, CLOCK_1MS);
    pvdc_write_plane(t, pvdc_plane_of(t, head, PRIMARY), head, 0, 0);
    pvdc_wr_head(t, head, PVDC_HS_CONNECTOR, connector);
}

/* The shadow state of @head disabled, its primary plane too. */
static void write_disabled_head(PVDCTest *t, unsigned int head)
{
    pvdc_wr_plane(t, pvdc_plane_of(t, head, PRIMARY), PVDC_PS_CTRL, 0);
    pvdc_wr_head(t, head, PVDC_HS_CTRL, 0);
}

static uint32_t active_connector(PVDCTest *t, unsigned int head)
{
    return pvdc_rd(t, PVDC_HEAD_ACTIVE(head) + PVDC_HS_CONNECTOR);
}

/* Two members of one group claim a connector: the lower head reports it. */
static void test_connector_claimed_twice_in_a_group(void)
{
    PVDCSnapshot before;
    PVDCTest t;

    pvdc_test_start(&t, RULE_PROPS);
    pvdc_snapshot_active(&t, &before);
    write_routed_head(&t, 0, 1);
    write_routed_head(&t, 1, 1);
    pvdc_wr(&t, PVDC_REG_MULTI_DOORBELL, BIT(0) | BIT(1));
    g_assert_cmphex(pvdc_wait_outcome(&t, 0, 2 * SCALE_MS), ==,
                    pvdc_head_result(PVDC_ERR_CONNECTOR));
    g_assert_cmphex(pvdc_wait_outcome(&t, 1, 0), ==,
                    pvdc_head_result(PVDC_ERR_GROUP));
    pvdc_assert_active_is(&t, &before);
    pvdc_test_stop(&t);
}

/* A disabled head takes any HS_CONNECTOR and reads it back. */
static void test_disabled_head_ignores_its_connector(void)
{
    static const uint32_t values[] = { 0xffffffff, 2, 0, 0x80000000 };
    PVDCTest t;

    pvdc_test_start(&t, RULE_PROPS);
    pvdc_enable_head(&t, 0, CLOCK_1MS);
    for (int i = 0; i < ARRAY_SIZE(values); i++) {
        /* 0: driven by head 0, but head 1 drives nothing */
        pvdc_wr_head(&t, 1, PVDC_HS_CONNECTOR, values[i]);
        g_assert_cmphex(pvdc_rd(&t, PVDC_HEAD_SHADOW(1) + PVDC_HS_CONNECTOR),
                        ==, values[i]);
        g_assert_cmphex(pvdc_commit(&t, 1), ==, PVDC_RESULT_APPLIED);
        g_assert_cmphex(active_connector(&t, 1), ==, values[i]);
        g_assert_cmphex(active_connector(&t, 0), ==, 0);
    }
    pvdc_test_stop(&t);
}

/* One group disables head 0 and gives its connector to head 1. */
static void test_connector_moves_in_one_group(void)
{
    PVDCTest t;

    pvdc_test_start(&t, RULE_PROPS);
    pvdc_enable_head(&t, 0, CLOCK_1MS);
    write_disabled_head(&t, 0);
    write_routed_head(&t, 1, 0);
    pvdc_wr(&t, PVDC_REG_MULTI_DOORBELL, BIT(0) | BIT(1));
    g_assert_cmphex(pvdc_wait_outcome(&t, 0, 2 * SCALE_MS), ==,
                    PVDC_RESULT_APPLIED);
    g_assert_cmphex(pvdc_wait_outcome(&t, 1, 0), ==, PVDC_RESULT_APPLIED);
    g_assert_cmphex(pvdc_rd(&t, PVDC_HEAD_ACTIVE(0) + PVDC_HS_CTRL), ==, 0);
    g_assert_cmphex(pvdc_rd(&t, PVDC_HEAD_ACTIVE(1) + PVDC_HS_CTRL), ==,
                    PVDC_HS_CTRL_ENABLE);
    g_assert_cmphex(active_connector(&t, 1), ==, 0);
    pvdc_test_stop(&t);
}

/*
 * Head 1 armed alone while head 0's disable waits for its vblank latches
 * first, a frame of its faster mode later: connector 0 is still driven.
 * Once head 0 let go, the same commit applies.
 */
static void test_connector_taken_before_it_is_released(void)
{
    PVDCSnapshot before;
    PVDCTest t;
    int64_t t0;

    pvdc_test_start(&t, RULE_PROPS);
    t0 = pvdc_enable_head(&t, 0, CLOCK_2MS);
    write_disabled_head(&t, 0);
    pvdc_doorbell(&t, 0);
    write_routed_head(&t, 1, 0);
    pvdc_snapshot_active(&t, &before);
    g_assert_cmphex(pvdc_commit(&t, 1), ==,
                    pvdc_head_result(PVDC_ERR_CONNECTOR));
    g_assert_cmpint(pvdc_now_ns(&t), <, t0 + pvdc_period_ns(CLOCK_2MS));
    pvdc_assert_active_is(&t, &before);
    g_assert_cmphex(pvdc_wait_outcome(&t, 0, 2 * SCALE_MS), ==,
                    PVDC_RESULT_APPLIED);
    g_assert_cmphex(pvdc_commit(&t, 1), ==, PVDC_RESULT_APPLIED);
    g_assert_cmphex(active_connector(&t, 1), ==, 0);
    pvdc_test_stop(&t);
}

/*
 * Two enabled heads swap their connectors by a modeset: not in one
 * commit that keeps them enabled, but disabled, then enabled swapped.
 */
static void test_heads_swap_connectors_through_disable(void)
{
    PVDCSnapshot before;
    PVDCTest t;

    pvdc_test_start(&t, RULE_PROPS);
    pvdc_enable_head(&t, 0, CLOCK_1MS);
    pvdc_enable_head(&t, 1, CLOCK_1MS);
    pvdc_snapshot_active(&t, &before);
    pvdc_wr_head(&t, 0, PVDC_HS_CONNECTOR, 1);
    pvdc_wr_head(&t, 1, PVDC_HS_CONNECTOR, 0);
    pvdc_wr(&t, PVDC_REG_MULTI_DOORBELL, BIT(0) | BIT(1));
    g_assert_cmphex(pvdc_wait_outcome(&t, 0, 2 * SCALE_MS), ==,
                    pvdc_head_result(PVDC_ERR_MODESET_REQUIRED));
    g_assert_cmphex(pvdc_wait_outcome(&t, 1, 0), ==,
                    pvdc_head_result(PVDC_ERR_GROUP));
    pvdc_assert_active_is(&t, &before);

    write_disabled_head(&t, 0);
    write_disabled_head(&t, 1);
    pvdc_wr(&t, PVDC_REG_MULTI_DOORBELL, BIT(0) | BIT(1));
    g_assert_cmphex(pvdc_wait_outcome(&t, 0, 2 * SCALE_MS), ==,
                    PVDC_RESULT_APPLIED);
    write_routed_head(&t, 0, 1);
    write_routed_head(&t, 1, 0);
    pvdc_wr(&t, PVDC_REG_MULTI_DOORBELL, BIT(0) | BIT(1));
    g_assert_cmphex(pvdc_wait_outcome(&t, 0, 2 * SCALE_MS), ==,
                    PVDC_RESULT_APPLIED);
    g_assert_cmphex(pvdc_wait_outcome(&t, 1, 0), ==, PVDC_RESULT_APPLIED);
    g_assert_cmphex(active_connector(&t, 0), ==, 1);
    g_assert_cmphex(active_connector(&t, 1), ==, 0);
    pvdc_test_stop(&t);
}

/* A reset routes head h to connector h again, in every window. */
static void test_reset_restores_identity_routing(void)
{
    PVDCTest t;

    pvdc_test_start(&t, "heads=3");
    write_routed_head(&t, 1, 0);
    g_assert_cmphex(pvdc_commit(&t, 1), ==, PVDC_RESULT_APPLIED);
    pvdc_wr_head(&t, 0, PVDC_HS_CONNECTOR, 2);
    g_assert_cmphex(pvdc_commit(&t, 0), ==, PVDC_RESULT_APPLIED);
    pvdc_wr_head(&t, 2, PVDC_HS_CONNECTOR, 0xffffffff);
    g_assert_cmphex(active_connector(&t, 1), ==, 0);
    g_assert_cmphex(active_connector(&t, 0), ==, 2);

    qtest_system_reset(t.qts);
    pvdc_test_detach(&t);
    pvdc_test_attach(&t, t.qts);
    pvdc_assert_reset_state(&t);
    pvdc_test_stop(&t);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);

    qtest_add_func("/pvdc/heads/are-independent-at-different-refresh-rates",
                   test_heads_are_independent);
    qtest_add_func("/pvdc/heads/commit-never-changes-a-head-outside-its-group",
                   test_commit_never_changes_a_head_outside_its_group);
    qtest_add_func("/pvdc/heads/multi-head-commit-is-all-or-none",
                   test_multi_head_commit_is_all_or_none);
    qtest_add_func("/pvdc/modeset/timings-change-only-through-disable-enable",
                   test_timings_change_only_through_disable_enable);
    qtest_add_func("/pvdc/modeset/enable-latches-at-the-first-vblank-of-its"
                   "-timeline",
                   test_enable_latches_at_the_first_vblank);
    qtest_add_func("/pvdc/modeset/link-up-delay-is-respected",
                   test_link_up_delay_is_respected);
    qtest_add_func("/pvdc/modeset/stalled-device-latches-nothing-until"
                   "-released",
                   test_stalled_device_latches_nothing_until_released);

    qtest_add_func("/pvdc/routing/connector-claimed-twice-in-a-group"
                   "-is-rejected-by-the-lower-head",
                   test_connector_claimed_twice_in_a_group);
    qtest_add_func("/pvdc/routing/disabled-head-ignores-its-connector",
                   test_disabled_head_ignores_its_connector);
    qtest_add_func("/pvdc/routing/connector-moves-between-heads-in-one-group",
                   test_connector_moves_in_one_group);
    qtest_add_func("/pvdc/routing/connector-taken-before-it-is-released"
                   "-is-rejected",
                   test_connector_taken_before_it_is_released);
    qtest_add_func("/pvdc/routing/heads-swap-connectors-through-disable",
                   test_heads_swap_connectors_through_disable);
    qtest_add_func("/pvdc/routing/reset-restores-identity-routing",
                   test_reset_restores_identity_routing);

    return g_test_run();
}
