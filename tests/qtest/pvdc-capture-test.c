/*
 * QTest cases for pvdc's frame capture: the CRC of each frame, tagged
 * with its vblank count, and writeback, the frame of a commit written
 * into its target at the latch point in each writeback format, checked
 * against the screendump, the CRC and the reference composer of the
 * compose qtest library (pvdc-qtest-compose.h); and the composition
 * budget both share, which defers a latch rather than drop it.
 *
 * Time only moves through the qtest clock; the mode is 64x48 at one
 * frame per millisecond.
 *
 * Copyright (c) 2026 The pvdc authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "pvdc-qtest-compose.h"

/* ------------------------------------------------------------------------ */
/* CRC capture                                                              */
/* ------------------------------------------------------------------------ */

/*
 * A CRC is captured when the head is enabled and at every vblank after,
 * each tagged with its vblank count; turned off, the last one stays.
 */
static void test_crc_frame_follows_vblank_count(void)
{
    g_autofree uint32_t *want = g_new(uint32_t, MODE_W * MODE_H);
    PVDCScene scene = {};
    uint32_t crc;
    PVDCCompose t;

    pvdc_compose_start(&t, NULL, true);
    pvdc_build_two_planes(&t, &scene);
    pvdc_reference(&t, &scene, want);
    crc = pvdc_frame_crc(want, MODE_W * MODE_H);
    pvdc_commit_scene(&t, 0, &scene);
    g_assert_cmphex(pvdc_head_ctl(&t.p, 0, PVDC_HEAD_CRC_VALUE), ==, crc);
    g_assert_cmpuint(pvdc_head_ctl(&t.p, 0, PVDC_HEAD_CRC_FRAME), ==,
                     pvdc_head_ctl(&t.p, 0, PVDC_HEAD_VBLANK_COUNT));
    g_assert_cmphex(pvdc_next_frame_crc(&t, 0), ==, crc);
    g_assert_cmphex(pvdc_next_frame_crc(&t, 0), ==, crc);

    /* off: the last value stays, nothing more is captured */
    pvdc_wr(&t.p, PVDC_HEAD_CONTROL(0) + PVDC_HEAD_CRC_CTRL, 0);
    pvdc_step_to(&t.p, t.p.now + 10 * SCALE_MS);
    g_assert_cmphex(pvdc_head_ctl(&t.p, 0, PVDC_HEAD_CRC_VALUE), ==, crc);
    g_assert_cmpuint(pvdc_head_ctl(&t.p, 0, PVDC_HEAD_CRC_FRAME), <,
                     pvdc_head_ctl(&t.p, 0, PVDC_HEAD_VBLANK_COUNT));
    pvdc_compose_stop(&t);
}

/* ------------------------------------------------------------------------ */
/* Writeback                                                                */
/* ------------------------------------------------------------------------ */

/* Nothing written anywhere in the target span. */
static void assert_wb_untouched(PVDCCompose *t)
{
    g_autofree uint8_t *span = g_malloc(WB_SPAN);

    qpci_memread(t->p.dev, t->p.vram, WB_BASE - WB_GUARD, span, WB_SPAN);
    g_assert_true(pvdc_wb_untouched(span, 0, WB_SPAN));
}

/* An opaque primary, and an ARGB overlay blended and scaled over it. */
static void build_wb_scene(PVDCCompose *t, PVDCScene *scene, unsigned int seed)
{
    PVDCPlane p;

    memset(scene, 0, sizeof(*scene));
    scene->background = 0x102030;
    pvdc_scene_add(scene, pvdc_scene_plane(t, PRIMARY, PVDC_FMT_XRGB8888, 0,
                                           MODE_W, MODE_H, 0, 0, 0));
    p = pvdc_scene_plane(t, OVERLAY(0), PVDC_FMT_ARGB8888, 1 + seed, 20, 15, 7,
                         5, 1);
    p.ctrl = BLEND(PVDC_BLEND_PREMULTI);
    p.src_x = FP16(2);
    p.src_w = FP16(17);
    p.dst_w = 45;
    p.dst_h = 37;
    p.alpha = 0xc000;
    pvdc_scene_add(scene, p);
}

static void test_wb_format(const void *opaque)
{
    static PVDCColor invert = {
        .stages = PVDC_HS_CTRL_GAMMA,
        .gamma_size = 2,
    };
    PVDCWriteback wb = { .format = *(const uint32_t *)opaque,
                      .pitch = MODE_PITCH + 64 };
    PVDCScene scene;
    PVDCCompose t;

    pvdc_lut_invert(invert.gamma);
    pvdc_compose_start(&t, NULL, true);
    build_wb_scene(&t, &scene, 0);
    scene.wb = &wb;
    pvdc_wb_clear(&t);
    pvdc_commit_scene(&t, 0, &scene);
    g_assert_cmphex(pvdc_rd(&t.p, PVDC_HEAD_ACTIVE(0) + PVDC_HS_CTRL) &
                    PVDC_HS_CTRL_WRITEBACK, ==, PVDC_HS_CTRL_WRITEBACK);
    pvdc_assert_wb_is_the_frame(&t, &scene);

    /* after the colour pipeline, on an enabled head at its vblank */
    scene.color = &invert;
    wb.pitch = WB_MAX_PITCH;
    pvdc_wb_clear(&t);
    pvdc_commit_scene(&t, 0, &scene);
    pvdc_assert_wb_is_the_frame(&t, &scene);
    pvdc_compose_stop(&t);
}

/*
 * The frame is written once, at the latch of the commit that asks for it:
 * VRAM written afterwards does not change it, a commit without WRITEBACK
 * writes nothing, one with it writes the frame as it then is, and a
 * refused one writes nothing.
 */
static void test_wb_written_once_at_the_latch(void)
{
    PVDCWriteback wb = { .format = PVDC_FMT_XRGB8888, .pitch = MODE_PITCH };
    g_autofree uint32_t *first = NULL, *again = NULL;
    uint64_t primary = PVDC_PLANE_SHADOW(pvdc_slot_index(0, PRIMARY));
    PVDCScene scene;
    PVDCCompose t;

    pvdc_compose_start(&t, NULL, true);
    build_wb_scene(&t, &scene, 0);
    scene.wb = &wb;
    pvdc_wb_clear(&t);
    pvdc_commit_scene(&t, 0, &scene);
    first = pvdc_wb_read(&t, &wb);

    /* new pixels under the primary, frames later: the target keeps its */
    scene.planes[0] = pvdc_scene_plane(&t, PRIMARY, PVDC_FMT_XRGB8888, 0,
                                       MODE_W, MODE_H, 0, 0, 0);
    pvdc_fill_lines(&t, FB_BASE(0), MODE_PITCH, 4, MODE_W, MODE_H, 77);
    pvdc_step_to_next_vblank(&t.p, 0);
    pvdc_step_to_next_vblank(&t.p, 0);
    again = pvdc_wb_read(&t, &wb);
    pvdc_assert_pictures_equal(again, first, 0);
    g_free(again);

    /* a flip without WRITEBACK: the bit is not kept */
    pvdc_wb_clear(&t);
    scene.wb = NULL;
    pvdc_commit_scene(&t, 0, &scene);
    g_assert_cmphex(pvdc_rd(&t.p, PVDC_HEAD_ACTIVE(0) + PVDC_HS_CTRL), ==,
                    PVDC_HS_CTRL_ENABLE);
    pvdc_step_to_next_vblank(&t.p, 0);
    assert_wb_untouched(&t);

    /* with it again: the frame as VRAM now has it */
    scene.wb = &wb;
    pvdc_commit_scene(&t, 0, &scene);
    again = pvdc_wb_read(&t, &wb);
    pvdc_assert_wb_is_the_frame(&t, &scene);

    /* refused (a plane rule): nothing written */
    pvdc_wb_clear(&t);
    pvdc_wr(&t.p, primary + PVDC_PS_FB_OFFSET, 2);
    pvdc_doorbell(&t.p, 0);
    g_assert_cmphex(pvdc_wait_outcome(&t.p, 0, NANOSECONDS_PER_SECOND), ==,
                    pvdc_result_of(PVDC_ERR_OFFSET_ALIGN,
                                   pvdc_slot_index(0, PRIMARY)));
    pvdc_step_to_next_vblank(&t.p, 0);
    assert_wb_untouched(&t);
    pvdc_compose_stop(&t);
}

/*
 * The target is marked dirty: head 1 showing it in an overlay (composed,
 * not scanned out directly) shows the new pixels on its console.
 */
static void test_wb_target_is_marked_dirty(void)
{
    PVDCWriteback wb = { .format = PVDC_FMT_ARGB8888, .pitch = MODE_PITCH };
    g_autofree uint32_t *before = NULL, *after = NULL, *written = NULL;
    PVDCPlane viewer = {
        .slot = OVERLAY(0),
        .format = PVDC_FMT_XRGB8888,
        .fb = WB_BASE / FB_SPACING,
        .pitch = MODE_PITCH,
        .fb_w = MODE_W,
        .fb_h = MODE_H,
        .src_w = FP16(MODE_W),
        .src_h = FP16(MODE_H),
        .dst_x = 1,
        .dst_y = 1,
        .dst_w = MODE_W,
        .dst_h = MODE_H,
        .alpha = 0xffff,
    };
    PVDCScene scene, shows_target = { .background = 0x000080 };
    PVDCCompose t;

    pvdc_compose_start(&t, NULL, false);
    g_assert_cmpuint(FB_BASE(viewer.fb), ==, WB_BASE);
    pvdc_wb_clear(&t);
    pvdc_scene_add(&shows_target, viewer);
    pvdc_commit_scene(&t, 1, &shows_target);
    before = pvdc_screendump_mode(t.p.qts, 1);
    g_assert_cmphex(before[MODE_W + 1], ==, 0xa5a5a5);

    build_wb_scene(&t, &scene, 0);
    scene.wb = &wb;
    pvdc_commit_scene(&t, 0, &scene);
    written = pvdc_wb_read(&t, &wb);
    after = pvdc_screendump_mode(t.p.qts, 1);
    for (int y = 1; y < MODE_H; y++) {
        for (int x = 1; x < MODE_W; x++) {
            g_assert_cmphex(after[y * MODE_W + x], ==,
                            written[(y - 1) * MODE_W + x - 1]);
        }
    }
    pvdc_compose_stop(&t);
}

/* 0x00RRGGBB as the 0x00BBGGRR of an ABGR8888 pixel */
static uint32_t bgr(uint32_t rgb)
{
    return (rgb & 0xff) << 16 | (rgb & 0xff00) | (rgb >> 16 & 0xff);
}

/*
 * Writebacks of a large mode with four scaled planes overdraw the
 * composition budget CRC capture shares: a commit that reaches its latch
 * point in debt stays armed (DOORBELL 1, DONE_SEQ unchanged) and latches,
 * written, at a later vblank.  None is dropped, and head 1 keeps latching
 * its flips at its own vblanks meanwhile.  A head enabled by such a
 * commit waits whole frames of its new mode.
 */
static void test_wb_budget_defers_the_latch(void)
{
    const uint32_t w = 2048, h = 2048, commits = 6;
    uint64_t hs = PVDC_HEAD_SHADOW(0);
    unsigned int deferred = 0;
    int64_t enabled_at;
    PVDCScene small = {};
    PVDCCompose t;

    /* VRAM that holds the targets above WB_BASE: the default does not */
    pvdc_compose_start(&t, "max-width=2048,max-height=2048,vram-size=64M",
                       false);
    pvdc_build_two_planes(&t, &small);
    pvdc_commit_scene(&t, 1, &small);

    /* 10 ms frames: each refills a tenth of what one writeback costs */
    pvdc_write_mode_sized(&t.p, 0, w, h, w, h, w * h / 10);
    for (unsigned int slot = PRIMARY; slot < CURSOR; slot++) {
        PVDCPlane p = pvdc_scene_plane(&t, slot, PVDC_FMT_XRGB8888, slot, 16,
                                       16, 0, 0, slot);

        p.dst_w = w;
        p.dst_h = h;
        pvdc_write_scene_plane(&t, 0, &p);
    }
    pvdc_wr(&t.p, hs + PVDC_HS_WB_FORMAT, PVDC_FMT_XRGB8888);
    pvdc_wr(&t.p, hs + PVDC_HS_WB_OFFSET, WB_BASE);
    pvdc_wr(&t.p, hs + PVDC_HS_WB_PITCH, w * 4);
    pvdc_wr(&t.p, hs + PVDC_HS_CTRL,
            PVDC_HS_CTRL_ENABLE | PVDC_HS_CTRL_WRITEBACK);

    for (unsigned int k = 0; k < commits; k++) {
        uint64_t written = pvdc_compositions(&t, 0);
        uint32_t seq = pvdc_head_ctl(&t.p, 0, PVDC_HEAD_ARMED_SEQ) + 1;
        uint32_t natural = pvdc_head_ctl(&t.p, 0, PVDC_HEAD_VBLANK_COUNT) + 1;

        qtest_writel(t.p.qts, t.p.vram.addr + WB_BASE, 0);
        pvdc_doorbell(&t.p, 0);
        if (k) {
            int64_t latch = pvdc_vblank_time(&t.p, 0) +
                            pvdc_head_ctl(&t.p, 0, PVDC_HEAD_FRAME_PERIOD);

            /* a flip of head 1 armed across head 0's latch point */
            pvdc_step_to(&t.p, latch - 1);
            pvdc_doorbell(&t.p, 1);
            pvdc_step_to(&t.p, latch);
        }
        if (pvdc_head_ctl(&t.p, 0, PVDC_HEAD_DOORBELL)) {
            /* in debt at its latch point: still armed, nothing written */
            deferred++;
            g_assert_cmpuint(pvdc_head_ctl(&t.p, 0, PVDC_HEAD_DONE_SEQ), ==,
                             seq - 1);
            g_assert_cmphex(qtest_readl(t.p.qts, t.p.vram.addr + WB_BASE),
                            ==, 0);
            g_assert_cmpuint(pvdc_compositions(&t, 0), ==, written);
        }
        while (pvdc_head_ctl(&t.p, 0, PVDC_HEAD_DOORBELL)) {
            uint32_t flip = pvdc_head_ctl(&t.p, 1, PVDC_HEAD_ARMED_SEQ);

            /* head 1 latches its flips at its own vblanks meanwhile */
            pvdc_step_to(&t.p, pvdc_now_ns(&t.p) + PERIOD_1MS);
            g_assert_cmpuint(pvdc_head_ctl(&t.p, 1, PVDC_HEAD_DONE_SEQ), ==,
                             flip);
            g_assert_cmphex(pvdc_head_ctl(&t.p, 1, PVDC_HEAD_RESULT), ==,
                            PVDC_RESULT_APPLIED);
            pvdc_doorbell(&t.p, 1);
        }
        g_assert_cmpuint(pvdc_head_ctl(&t.p, 0, PVDC_HEAD_DONE_SEQ), ==, seq);
        g_assert_cmphex(pvdc_head_ctl(&t.p, 0, PVDC_HEAD_RESULT), ==,
                        PVDC_RESULT_APPLIED);
        /* written once, at a vblank of its own */
        g_assert_cmpuint(pvdc_compositions(&t, 0), ==, written + 1);
        g_assert_cmphex(qtest_readl(t.p.qts, t.p.vram.addr + WB_BASE) >> 24,
                        ==, 0xff);
        if (k) {
            g_assert_cmpuint(pvdc_head_ctl(&t.p, 0, PVDC_HEAD_DONE_FRAME), >=,
                             natural);
        }
    }
    g_test_message("%u of %u writebacks deferred", deferred, commits);
    g_assert_cmpuint(deferred, >=, 2);

    /*
     * Still in debt, head 1 disabled and enabled again with a writeback:
     * due at once, it latches a whole number of frames of its new mode
     * later.
     */
    g_assert_cmphex(pvdc_wait_outcome(&t.p, 1, NANOSECONDS_PER_SECOND), ==,
                    PVDC_RESULT_APPLIED);
    for (unsigned int slot = 0; slot < SLOTS; slot++) {
        pvdc_wr(&t.p,
                PVDC_PLANE_SHADOW(pvdc_slot_index(1, slot)) + PVDC_PS_CTRL, 0);
    }
    pvdc_wr(&t.p, PVDC_HEAD_SHADOW(1) + PVDC_HS_CTRL, 0);
    g_assert_cmphex(pvdc_commit(&t.p, 1), ==, PVDC_RESULT_APPLIED);
    hs = PVDC_HEAD_SHADOW(1);
    pvdc_wr(&t.p, hs + PVDC_HS_WB_FORMAT, PVDC_FMT_ABGR8888);
    pvdc_wr(&t.p, hs + PVDC_HS_WB_OFFSET, WB_BASE + 32 * MiB);
    pvdc_wr(&t.p, hs + PVDC_HS_WB_PITCH, MODE_PITCH);
    pvdc_wr(&t.p, hs + PVDC_HS_CTRL,
            PVDC_HS_CTRL_ENABLE | PVDC_HS_CTRL_WRITEBACK);
    enabled_at = pvdc_now_ns(&t.p);
    pvdc_doorbell(&t.p, 1);
    g_assert_cmpuint(pvdc_head_ctl(&t.p, 1, PVDC_HEAD_DOORBELL), ==, 1);
    g_assert_cmphex(pvdc_wait_outcome(&t.p, 1, NANOSECONDS_PER_SECOND), ==,
                    PVDC_RESULT_APPLIED);
    g_test_message("head 1 enabled %" PRId64 " ns after its doorbell",
                   pvdc_now_ns(&t.p) - enabled_at);
    g_assert_cmpint(pvdc_vblank_time(&t.p, 1), ==, pvdc_now_ns(&t.p));
    g_assert_cmpint(pvdc_now_ns(&t.p), >, enabled_at);
    g_assert_cmpint((pvdc_now_ns(&t.p) - enabled_at) % PERIOD_1MS, ==, 0);
    g_assert_cmphex(qtest_readl(t.p.qts, t.p.vram.addr + WB_BASE + 32 * MiB),
                    ==, 0xff000000 | bgr(small.background));
    pvdc_compose_stop(&t);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);

    qtest_add_func("/pvdc/compose/crc/frame-follows-the-vblank-count",
                   test_crc_frame_follows_vblank_count);
    for (size_t i = 0; i < PVDC_WB_FORMATS; i++) {
        g_autofree char *path =
            g_strdup_printf("/pvdc/compose/writeback/%s-is-the-frame-shown",
                            pvdc_wb_format_names[i]);

        qtest_add_data_func(path, &pvdc_wb_formats[i], test_wb_format);
    }
    qtest_add_func("/pvdc/compose/writeback/written-once-at-the-latch",
                   test_wb_written_once_at_the_latch);
    qtest_add_func("/pvdc/compose/writeback/target-is-marked-dirty",
                   test_wb_target_is_marked_dirty);
    qtest_add_func("/pvdc/compose/writeback/over-budget-defers-the-latch",
                   test_wb_budget_defers_the_latch);

    return g_test_run();
}
