/*
 * QTest cases for pvdc against the classes of bugs that have hit QEMU's
 * display devices, one test per class, written against pvdc's registers
 * (interrupt, doorbell and host CPU storms are pvdc-storm-test's):
 *
 *   fb-outside-vram         CVE-2014-8106, CVE-2017-2615 (cirrus blits:
 *                           negative pitch, offsets outside VRAM)
 *   mode-arithmetic         CVE-2016-3712 (VGA: integer overflow through
 *                           the mode registers)
 *   zero-divisors           CVE-2016-9921 (cirrus: divide by zero)
 *   chroma-layout           the same for the Cb:Cr plane of NV12, P010
 *   huge-rectangles         CVE-2020-11869, CVE-2021-3638 (ati-vga: 2D
 *                           paths with huge or negative rectangles)
 *   tiny-sources            unlimited upscaling: 1/65536 of a pixel over
 *                           the largest destination
 *   cursor-size             CVE-2021-4206 (QXL: cursor size overflow)
 *   memory handed to the UI a surface that would run past VRAM
 *   connectors              HS_CONNECTOR as an index: past the
 *                           connectors, near 2^32, claimed twice
 *   values                  32-bit wraps, zeros and all-ones in the plane
 *                           and mode registers, one at a time
 *
 * Each case checks three things: the device refuses what it must (with the
 * documented error code), stays responsive (registers read back, a later
 * valid commit applies), and keeps its active state (read back through the
 * active windows).  Geometries that are valid but sit on an edge (a
 * framebuffer ending on the last byte of VRAM, planes wholly off-screen,
 * bilinear filtering of the last pixel) are applied and then composed,
 * through the frame CRC and a screendump: QEMU keeps a guard page after
 * every RAM block, so a read past the end of VRAM crashes the test, and the
 * ASan build reports any other overrun.
 *
 * Time only moves through the qtest clock.
 *
 * Copyright (c) 2026 The pvdc authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "pvdc-qtest.h"

/* Every colour stage of HS_CTRL. */
#define COLOR_STAGES        (PVDC_HS_CTRL_DEGAMMA | PVDC_HS_CTRL_CTM | \
                             PVDC_HS_CTRL_GAMMA)

/* ------------------------------------------------------------------------ */
/* Helpers                                                                  */
/* ------------------------------------------------------------------------ */

/*
 * A machine with @props, head 0 on with its primary and CRC capture: the
 * "good" state every hostile case starts from, kept in @before.
 */
static void start_good_with(PVDCTest *t, const char *props,
                            const char *extra, PVDCSnapshot *before)
{
    pvdc_test_start_with(t, props, extra);
    pvdc_enable_good_head0(t);
    pvdc_wr(t, PVDC_HEAD_CONTROL(0) + PVDC_HEAD_CRC_CTRL, PVDC_CRC_CTRL_ENABLE);
    pvdc_snapshot_active(t, before);
}

static void start_good(PVDCTest *t, const char *props, PVDCSnapshot *before)
{
    start_good_with(t, props, NULL, before);
}

/* The CRC of the frame that started at the last vblank of head 0. */
static uint32_t current_crc(PVDCTest *t)
{
    uint32_t crc, frame;

    g_assert_cmphex(pvdc_head_ctl(t, 0, PVDC_HEAD_CRC_CTRL), ==,
                    PVDC_CRC_CTRL_ENABLE);
    crc = pvdc_read_crc(t, 0, &frame);
    g_assert_cmpuint(frame, ==, pvdc_head_ctl(t, 0, PVDC_HEAD_VBLANK_COUNT));
    return crc;
}

/*
 * One hostile value: write @val to register @reg of plane @plane, commit
 * head @head, expect @expected, check the device, restore the register.
 */
static void refuse_plane_value(PVDCTest *t, unsigned int head,
                               unsigned int plane, uint32_t reg, uint32_t val,
                               uint32_t expected, const PVDCSnapshot *before)
{
    uint32_t good = pvdc_rd(t, PVDC_PLANE_SHADOW(plane) + reg);

    pvdc_wr_plane(t, plane, reg, val);
    g_assert_cmphex(pvdc_commit(t, head), ==, expected);
    pvdc_assert_active_is(t, before);
    pvdc_wr_plane(t, plane, reg, good);
}

/* A hostile value of a plane register, and the error it is refused with. */
typedef struct PlaneValue {
    uint32_t reg, val;
    uint32_t code;
} PlaneValue;

/* Each of @n values @v, one at a time: refuse_plane_value(). */
static void refuse_plane_values(PVDCTest *t, unsigned int head,
                                unsigned int plane, const PlaneValue *v,
                                size_t n, const PVDCSnapshot *before)
{
    for (size_t i = 0; i < n; i++) {
        refuse_plane_value(t, head, plane, v[i].reg, v[i].val,
                           pvdc_result_of(v[i].code, plane), before);
    }
}

/* ------------------------------------------------------------------------ */
/* CVE-2014-8106, CVE-2017-2615: framebuffers outside VRAM                  */
/* ------------------------------------------------------------------------ */

/*
 * A 64x48 XRGB8888 framebuffer whose last byte is the last byte of VRAM,
 * shown by @plane of head 0 with @ctrl: applied, composed, and (unscaled,
 * unfiltered) shown exactly.
 */
static void show_fb_at_vram_end(PVDCTest *t, unsigned int plane,
                                uint32_t pitch, uint32_t ctrl, bool exact)
{
    uint64_t size = (uint64_t)pitch * (MODE_H - 1) + MODE_PITCH;
    uint64_t offset = t->vram_size - size;
    g_autofree uint8_t *data = pvdc_fill_vram(t, offset, size, pitch);
    g_autofree uint32_t *px = g_new(uint32_t, MODE_W * MODE_H);

    g_assert_cmpuint(offset % 64, ==, 0);
    pvdc_write_fb(t, plane, PVDC_FMT_XRGB8888, offset, pitch, MODE_W, MODE_H);
    pvdc_wr_plane(t, plane, PVDC_PS_CTRL, PVDC_PS_CTRL_ENABLE | ctrl);
    g_assert_cmphex(pvdc_commit(t, 0), ==, PVDC_RESULT_APPLIED);
    pvdc_compose_again(t, 0);
    if (exact) {
        for (int y = 0; y < MODE_H; y++) {
            for (int x = 0; x < MODE_W; x++) {
                px[y * MODE_W + x] = ldl_le_p(data + y * pitch + x * 4);
            }
        }
        g_assert_cmphex(current_crc(t), ==,
                        pvdc_frame_crc(px, MODE_W * MODE_H));
    } else {
        (void)current_crc(t);
    }
}

static void test_fb_outside_vram_is_refused(void)
{
    unsigned int primary;
    PVDCSnapshot before;
    PVDCTest t;
    uint64_t v;
    uint32_t long_pitch;

    start_good(&t, "vram-size=16M", &before);
    v = t.vram_size;
    primary = pvdc_plane_of(&t, 0, PRIMARY);

    /* Offsets at and past the end, and 32-bit wrap of offset + size. */
    refuse_plane_value(&t, 0, primary, PVDC_PS_FB_OFFSET, v,
                       pvdc_result_of(PVDC_ERR_FB_BOUNDS, primary), &before);
    refuse_plane_value(&t, 0, primary, PVDC_PS_FB_OFFSET, v - 64,
                       pvdc_result_of(PVDC_ERR_FB_BOUNDS, primary), &before);
    refuse_plane_value(&t, 0, primary, PVDC_PS_FB_OFFSET,
                       v - MODE_PITCH * MODE_H + 64,
                       pvdc_result_of(PVDC_ERR_FB_BOUNDS, primary), &before);
    refuse_plane_value(&t, 0, primary, PVDC_PS_FB_OFFSET, 0xffffffc0,
                       pvdc_result_of(PVDC_ERR_FB_BOUNDS, primary), &before);
    /*
     * Negative pitches, read as signed: huge unsigned strides, refused
     * before any bound as pitch * height passes PVDC_FB_SPAN_MAX.
     */
    refuse_plane_value(&t, 0, primary, PVDC_PS_FB_PITCH, 0x80000000,
                       pvdc_result_of(PVDC_ERR_PITCH, primary), &before);
    refuse_plane_value(&t, 0, primary, PVDC_PS_FB_PITCH, (uint32_t)-64,
                       pvdc_result_of(PVDC_ERR_PITCH, primary), &before);
    refuse_plane_value(&t, 0, primary, PVDC_PS_FB_PITCH,
                       (uint32_t)-MODE_PITCH,
                       pvdc_result_of(PVDC_ERR_PITCH, primary), &before);
    /* A pitch that puts only the last line outside VRAM. */
    long_pitch = ROUND_UP((v - MODE_PITCH) / (MODE_H - 1) + 1, 64);
    refuse_plane_value(&t, 0, primary, PVDC_PS_FB_PITCH, long_pitch,
                       pvdc_result_of(PVDC_ERR_FB_BOUNDS, primary), &before);
    /* A framebuffer taller than VRAM, showing only its top. */
    pvdc_wr_plane(&t, primary, PVDC_PS_FB_PITCH, 16 * KiB);
    refuse_plane_value(&t, 0, primary, PVDC_PS_FB_SIZE,
                       PVDC_XY(MODE_W, t.max_h),
                       pvdc_result_of(PVDC_ERR_FB_BOUNDS, primary), &before);
    refuse_plane_value(&t, 0, primary, PVDC_PS_FB_SIZE,
                       PVDC_XY(MODE_W, 1025),
                       pvdc_result_of(PVDC_ERR_FB_BOUNDS, primary), &before);
    pvdc_wr_plane(&t, primary, PVDC_PS_FB_PITCH, MODE_PITCH);
    /* An overlay on head 1's commit, aimed past VRAM: refused too. */
    pvdc_write_mode(&t, 1, CLOCK_1MS);
    pvdc_write_plane(&t, pvdc_plane_of(&t, 1, PRIMARY), 1, 0, 0);
    pvdc_write_plane(&t, pvdc_plane_of(&t, 1, OVERLAY(0)), 1, v, 1);
    g_assert_cmphex(pvdc_commit(&t, 1), ==,
                    pvdc_result_of(PVDC_ERR_FB_BOUNDS,
                                   pvdc_plane_of(&t, 1, OVERLAY(0))));
    pvdc_assert_active_is(&t, &before);
    pvdc_wr_head(&t, 1, PVDC_HS_CTRL, 0);
    pvdc_wr_plane(&t, pvdc_plane_of(&t, 1, PRIMARY), PVDC_PS_CTRL, 0);
    pvdc_wr_plane(&t, pvdc_plane_of(&t, 1, OVERLAY(0)), PVDC_PS_CTRL, 0);
    pvdc_assert_still_works(&t, &before);
    pvdc_test_stop(&t);
}

/* Two-byte formats whose last pixel is the last byte of VRAM, shown. */
static void show_overlay_at_vram_end(PVDCTest *t)
{
    unsigned int ov = pvdc_plane_of(t, 0, OVERLAY(0));
    uint32_t pitch = 128;
    uint64_t off = t->vram_size - pitch * MODE_H;

    g_free(pvdc_fill_vram(t, off, pitch * MODE_H, 3));
    pvdc_wr_plane(t, ov, PVDC_PS_HEAD, 0);
    pvdc_wr_plane(t, ov, PVDC_PS_ZPOS, 1);
    pvdc_wr_plane(t, ov, PVDC_PS_ALPHA, 0xffff);
    pvdc_write_fb(t, ov, PVDC_FMT_YUYV, off, pitch, MODE_W, MODE_H);
    pvdc_wr_plane(t, ov, PVDC_PS_CTRL, PVDC_PS_CTRL_ENABLE);
    g_assert_cmphex(pvdc_commit(t, 0), ==, PVDC_RESULT_APPLIED);
    (void)current_crc(t);
    pvdc_write_fb(t, ov, PVDC_FMT_RGB565, off, pitch, MODE_W, MODE_H);
    g_assert_cmphex(pvdc_commit(t, 0), ==, PVDC_RESULT_APPLIED);
    (void)current_crc(t);
    /* Scaled up from its bottom-right pixels, filtered. */
    pvdc_wr_plane(t, ov, PVDC_PS_SRC_X, FP16(MODE_W - 8));
    pvdc_wr_plane(t, ov, PVDC_PS_SRC_Y, FP16(MODE_H - 6));
    pvdc_wr_plane(t, ov, PVDC_PS_SRC_W, FP16(8));
    pvdc_wr_plane(t, ov, PVDC_PS_SRC_H, FP16(6));
    pvdc_wr_plane(t, ov, PVDC_PS_CTRL,
                  PVDC_PS_CTRL_ENABLE | PVDC_PS_CTRL_FILTER_BILINEAR);
    g_assert_cmphex(pvdc_commit(t, 0), ==, PVDC_RESULT_APPLIED);
    (void)current_crc(t);
    pvdc_compose_again(t, 0);
    pvdc_wr_plane(t, ov, PVDC_PS_CTRL, 0);
    g_assert_cmphex(pvdc_commit(t, 0), ==, PVDC_RESULT_APPLIED);
}

/*
 * Framebuffers ending exactly on the last byte of VRAM are fine, and show
 * (QEMU's guard page after the RAM block catches a read one byte too far).
 */
static void test_fb_at_the_end_of_vram_shows(void)
{
    unsigned int primary;
    PVDCSnapshot before;
    PVDCTest t;

    start_good(&t, "vram-size=16M", &before);
    primary = pvdc_plane_of(&t, 0, PRIMARY);

    show_fb_at_vram_end(&t, primary, MODE_PITCH, 0, true);
    /* A pitch longer than a line: the last line is short. */
    show_fb_at_vram_end(&t, primary, 4 * KiB, 0, true);
    /* Rotated and reflected, the first pixel read is the last one. */
    show_fb_at_vram_end(&t, primary, MODE_PITCH,
                        PVDC_PS_CTRL_ROTATE_180 | PVDC_PS_CTRL_REFLECT_X,
                        false);
    show_fb_at_vram_end(&t, primary, MODE_PITCH,
                        PVDC_PS_CTRL_REFLECT_Y |
                        PVDC_PS_CTRL_FILTER_BILINEAR, false);

    /* Two-byte formats at the end of VRAM, through an overlay. */
    show_overlay_at_vram_end(&t);

    pvdc_write_fb(&t, primary, PVDC_FMT_XRGB8888, PVDC_GOOD_OFFSET, MODE_PITCH,
                  MODE_W, MODE_H);
    pvdc_wr_plane(&t, primary, PVDC_PS_CTRL, PVDC_PS_CTRL_ENABLE);
    g_assert_cmphex(pvdc_commit(&t, 0), ==, PVDC_RESULT_APPLIED);
    /* The overlay, disabled, still shows its last registers. */
    pvdc_snapshot_active(&t, &before);
    pvdc_assert_still_works(&t, &before);
    pvdc_test_stop(&t);
}

/* ------------------------------------------------------------------------ */
/* CVE-2016-3712: integer overflow through the mode and layout registers    */
/* ------------------------------------------------------------------------ */

#define LARGE_PROPS "vram-size=64M,max-width=16384,max-height=16384"

static void test_layout_arithmetic_does_not_overflow(void)
{
    unsigned int primary, ov;
    PVDCSnapshot before;
    PVDCTest t;

    start_good(&t, LARGE_PROPS, &before);
    primary = pvdc_plane_of(&t, 0, PRIMARY);
    ov = pvdc_plane_of(&t, 0, OVERLAY(0));

    /*
     * pitch * (height - 1) + offset is exactly 2^32: zero in 32 bits.
     * The source stays at the top of the framebuffer.  pitch * height
     * past PVDC_FB_SPAN_MAX is refused before the bounds are computed.
     */
    pvdc_write_fb(&t, primary, PVDC_FMT_XRGB8888, 256 * KiB, 256 * KiB, MODE_W,
                  16384);
    pvdc_wr_plane(&t, primary, PVDC_PS_SRC_H, FP16(MODE_H));
    pvdc_wr_plane(&t, primary, PVDC_PS_DST_SIZE, PVDC_XY(MODE_W, MODE_H));
    g_assert_cmphex(pvdc_commit(&t, 0), ==,
                    pvdc_result_of(PVDC_ERR_PITCH, primary));
    pvdc_assert_active_is(&t, &before);
    /* pitch * height is 2^32 (the form of the VGA bug). */
    pvdc_wr_plane(&t, primary, PVDC_PS_FB_OFFSET, 0);
    g_assert_cmphex(pvdc_commit(&t, 0), ==,
                    pvdc_result_of(PVDC_ERR_PITCH, primary));
    /* The widest framebuffer with the largest pitch that fits 32 bits. */
    pvdc_wr_plane(&t, primary, PVDC_PS_FB_PITCH, 0xffffffc0);
    g_assert_cmphex(pvdc_commit(&t, 0), ==,
                    pvdc_result_of(PVDC_ERR_PITCH, primary));
    /*
     * Within the span, offset + pitch * (height - 1) + line just past
     * 2^32: 64-bit bounds, no wrap.
     */
    pvdc_wr_plane(&t, primary, PVDC_PS_FB_PITCH, 64 * KiB);
    pvdc_wr_plane(&t, primary, PVDC_PS_FB_OFFSET,
                  (uint32_t)(0x100000000ull - 64 * KiB * (16384 - 1)));
    g_assert_cmphex(pvdc_commit(&t, 0), ==,
                    pvdc_result_of(PVDC_ERR_FB_BOUNDS, primary));
    pvdc_assert_active_is(&t, &before);
    pvdc_write_fb(&t, primary, PVDC_FMT_XRGB8888, PVDC_GOOD_OFFSET, MODE_PITCH,
                  MODE_W, MODE_H);

    /* The source rectangle wrapping in 32 bits. */
    refuse_plane_value(&t, 0, primary, PVDC_PS_SRC_X, 0xffff0000 | 0x8000,
                       pvdc_result_of(PVDC_ERR_SRC_RECT, primary), &before);
    pvdc_wr_plane(&t, primary, PVDC_PS_SRC_W, FP16(2));
    pvdc_wr_plane(&t, primary, PVDC_PS_DST_SIZE, PVDC_XY(2, MODE_H));
    refuse_plane_value(&t, 0, primary, PVDC_PS_SRC_X, 0xffff0000,
                       pvdc_result_of(PVDC_ERR_SRC_RECT, primary), &before);
    pvdc_wr_plane(&t, primary, PVDC_PS_SRC_W, FP16(MODE_W));
    pvdc_wr_plane(&t, primary, PVDC_PS_DST_SIZE, PVDC_XY(MODE_W, MODE_H));

    /*
     * Valid scalings whose limits overflow 32 bits: 4 * (16384 << 16) and
     * 8 * (8192 << 16) are both 2^32.  A 1-line framebuffer keeps the
     * bandwidth small; the destination is clipped to the head.
     */
    pvdc_write_fb(&t, ov, PVDC_FMT_XRGB8888, 1 * MiB, 16 * KiB, 4096, 1);
    pvdc_wr_plane(&t, ov, PVDC_PS_HEAD, 0);
    pvdc_wr_plane(&t, ov, PVDC_PS_ZPOS, 1);
    pvdc_wr_plane(&t, ov, PVDC_PS_ALPHA, 0xffff);
    pvdc_wr_plane(&t, ov, PVDC_PS_DST_SIZE, PVDC_XY(16384, 1));
    pvdc_wr_plane(&t, ov, PVDC_PS_CTRL, PVDC_PS_CTRL_ENABLE);
    g_assert_cmphex(pvdc_commit(&t, 0), ==, PVDC_RESULT_APPLIED);
    (void)current_crc(&t);
    pvdc_compose_again(&t, 0);
    pvdc_write_fb(&t, ov, PVDC_FMT_XRGB8888, 1 * MiB, 32 * KiB, 8192, 1);
    pvdc_wr_plane(&t, ov, PVDC_PS_DST_SIZE, PVDC_XY(4096, 1));
    pvdc_wr_plane(&t, ov, PVDC_PS_DST_POS, PVDC_XY(S16(-4000), 20));
    g_assert_cmphex(pvdc_commit(&t, 0), ==, PVDC_RESULT_APPLIED);
    (void)current_crc(&t);
    /* Just past the downscale limit. */
    pvdc_wr_plane(&t, ov, PVDC_PS_DST_SIZE, PVDC_XY(2047, 1));
    g_assert_cmphex(pvdc_commit(&t, 0), ==,
                    pvdc_result_of(PVDC_ERR_SCALE_RATIO, ov));
    pvdc_wr_plane(&t, ov, PVDC_PS_CTRL, 0);
    g_assert_cmphex(pvdc_commit(&t, 0), ==, PVDC_RESULT_APPLIED);
    pvdc_snapshot_active(&t, &before);
    pvdc_assert_still_works(&t, &before);
    pvdc_test_stop(&t);
}

static void test_mode_arithmetic_does_not_overflow(void)
{
    uint32_t bw_total;
    PVDCSnapshot before;
    PVDCTest t;

    /* No PIT: the slowest mode's first vblank is 49.7 days away. */
    start_good_with(&t, LARGE_PROPS, "-machine pit=off", &before);

    /* Allocations summing to 2^32: zero in 32 bits. */
    bw_total = pvdc_rd(&t, PVDC_REG_BANDWIDTH_TOTAL);
    pvdc_write_mode(&t, 1, CLOCK_1MS);
    pvdc_wr_head(&t, 1, PVDC_HS_BANDWIDTH,
            (uint32_t)(0x100000000ull - before.head[0][PVDC_HS_BANDWIDTH / 4]));
    g_assert_cmphex(pvdc_commit(&t, 1), ==,
                    pvdc_head_result(PVDC_ERR_BANDWIDTH_ALLOC));
    pvdc_wr_head(&t, 1, PVDC_HS_BANDWIDTH, UINT32_MAX);
    g_assert_cmphex(pvdc_commit(&t, 1), ==,
                    pvdc_head_result(PVDC_ERR_BANDWIDTH_ALLOC));
    pvdc_assert_active_is(&t, &before);
    pvdc_wr_head(&t, 1, PVDC_HS_BANDWIDTH, bw_total / t.heads);

    /* Timings at the top of their fields. */
    pvdc_wr_head(&t, 1, PVDC_HS_HTIMING, PVDC_XY(0xffff, 0xffff));
    g_assert_cmphex(pvdc_commit(&t, 1), ==, pvdc_head_result(PVDC_ERR_MODE));
    pvdc_write_mode_sized(&t, 1, 0x4000, 0x4000, 0xffff, 0xffff,
                          PVDC_MAX_PIXEL_CLOCK_KHZ);
    pvdc_wr_head(&t, 1, PVDC_HS_CTRL, 0xffffffff);
    pvdc_doorbell(&t, 1);
    /* Refused where the enable would latch: after a frame of 2.1 s. */
    g_assert_cmphex(pvdc_wait_outcome(&t, 1, 3 * NANOSECONDS_PER_SECOND), ==,
                    pvdc_head_result(PVDC_ERR_HEAD_RESERVED));
    pvdc_wr_head(&t, 1, PVDC_HS_CTRL, PVDC_HS_CTRL_ENABLE);
    pvdc_wr_head(&t, 1, PVDC_HS_PIXEL_CLOCK, UINT32_MAX);
    g_assert_cmphex(pvdc_commit(&t, 1), ==, pvdc_head_result(PVDC_ERR_MODE));
    pvdc_assert_active_is(&t, &before);

    /*
     * The slowest mode: 65535 x 65535 at 1 kHz is 49.7 days a frame.  It
     * applies, saturates FRAME_PERIOD, and its timeline (with a vblank
     * interrupt and CRC capture, which need the timer) does not overflow.
     */
    pvdc_write_mode_sized(&t, 1, 16, 16, 0xffff, 0xffff, 1);
    pvdc_commit_enable(&t, 1);
    g_assert_cmphex(pvdc_head_ctl(&t, 1, PVDC_HEAD_FRAME_PERIOD), ==,
                    UINT32_MAX);
    pvdc_wr(&t, PVDC_HEAD_CONTROL(1) + PVDC_HEAD_CRC_CTRL,
            PVDC_CRC_CTRL_ENABLE);
    pvdc_wr(&t, PVDC_REG_INT_ENABLE, PVDC_INT(1, PVDC_INT_VBLANK));
    pvdc_step_to(&t, t.now + 10 * PERIOD_1MS);
    g_assert_cmpuint(pvdc_head_ctl(&t, 1, PVDC_HEAD_VBLANK_COUNT), ==, 0);
    pvdc_wr(&t, PVDC_REG_INT_ENABLE, 0);
    pvdc_wr(&t, PVDC_HEAD_CONTROL(1) + PVDC_HEAD_CRC_CTRL, 0);
    /* (Disabling it would latch at its first vblank, in 49 days.) */

    pvdc_snapshot_active(&t, &before);
    pvdc_assert_still_works(&t, &before);
    pvdc_test_stop(&t);
}

/* ------------------------------------------------------------------------ */
/* CVE-2016-9921: division by zero                                          */
/* ------------------------------------------------------------------------ */

static void test_zero_divisors_are_refused(void)
{
    static const struct {
        uint32_t w, h, htotal, vtotal, clock;
    } zero_modes[] = {
        { MODE_W, MODE_H, MODE_HTOTAL, MODE_VTOTAL, 0 },
        { MODE_W, MODE_H, 0, MODE_VTOTAL, CLOCK_1MS },
        { MODE_W, MODE_H, MODE_HTOTAL, 0, CLOCK_1MS },
        { 0, MODE_H, MODE_HTOTAL, MODE_VTOTAL, CLOCK_1MS },
        { MODE_W, 0, MODE_HTOTAL, MODE_VTOTAL, CLOCK_1MS },
        { 0, 0, 0, 0, 0 },
        /* 1 x 1 pixel at 2 GHz: half a nanosecond, rounds to zero */
        { 1, 1, 1, 1, PVDC_MAX_PIXEL_CLOCK_KHZ },
    };
    unsigned int primary, h;
    PVDCSnapshot before;
    PVDCTest t;

    pvdc_test_start(&t, NULL);
    primary = pvdc_plane_of(&t, 0, PRIMARY);

    /* Vblank interrupts and CRCs asked of disabled heads (period 0). */
    pvdc_wr(&t, PVDC_REG_INT_ENABLE,
            MAKE_64BIT_MASK(0, PVDC_INT_BITS_PER_HEAD * t.heads));
    for (h = 0; h < t.heads; h++) {
        pvdc_wr(&t, PVDC_HEAD_CONTROL(h) + PVDC_HEAD_CRC_CTRL,
                PVDC_CRC_CTRL_ENABLE);
        g_assert_cmpuint(pvdc_head_ctl(&t, h, PVDC_HEAD_FRAME_PERIOD), ==, 0);
    }
    pvdc_step_to(&t, t.now + 50 * PERIOD_1MS);
    g_assert_cmpuint(pvdc_timer_callbacks(&t), ==, 0);
    for (h = 0; h < t.heads; h++) {
        g_assert_cmpuint(pvdc_head_ctl(&t, h, PVDC_HEAD_VBLANK_COUNT), ==, 0);
    }
    pvdc_wr(&t, PVDC_REG_INT_ENABLE, 0);
    pvdc_wr(&t, PVDC_REG_INT_STATUS, UINT32_MAX);

    pvdc_enable_good_head0(&t);
    pvdc_snapshot_active(&t, &before);

    for (int i = 0; i < ARRAY_SIZE(zero_modes); i++) {
        pvdc_write_mode_sized(&t, 1, zero_modes[i].w, zero_modes[i].h,
                              zero_modes[i].htotal, zero_modes[i].vtotal,
                              zero_modes[i].clock);
        g_assert_cmphex(pvdc_commit(&t, 1), ==,
                        pvdc_head_result(PVDC_ERR_MODE));
        pvdc_assert_active_is(&t, &before);
        g_assert_cmpuint(pvdc_head_ctl(&t, 1, PVDC_HEAD_FRAME_PERIOD), ==, 0);
        g_assert_cmpuint(pvdc_head_ctl(&t, 1, PVDC_HEAD_VBLANK_COUNT), ==, 0);
    }
    pvdc_wr_head(&t, 1, PVDC_HS_CTRL, 0);

    /* Zero sizes in the plane: framebuffer, pitch, source, destination. */
    refuse_plane_value(&t, 0, primary, PVDC_PS_FB_SIZE, 0,
                       pvdc_result_of(PVDC_ERR_FB_SIZE, primary), &before);
    refuse_plane_value(&t, 0, primary, PVDC_PS_FB_SIZE, PVDC_XY(MODE_W, 0),
                       pvdc_result_of(PVDC_ERR_FB_SIZE, primary), &before);
    refuse_plane_value(&t, 0, primary, PVDC_PS_FB_SIZE, PVDC_XY(0, MODE_H),
                       pvdc_result_of(PVDC_ERR_FB_SIZE, primary), &before);
    refuse_plane_value(&t, 0, primary, PVDC_PS_FB_PITCH, 0,
                       pvdc_result_of(PVDC_ERR_PITCH, primary), &before);
    refuse_plane_value(&t, 0, primary, PVDC_PS_SRC_W, 0,
                       pvdc_result_of(PVDC_ERR_SRC_RECT, primary), &before);
    refuse_plane_value(&t, 0, primary, PVDC_PS_SRC_H, 0,
                       pvdc_result_of(PVDC_ERR_SRC_RECT, primary), &before);
    refuse_plane_value(&t, 0, primary, PVDC_PS_DST_SIZE, 0,
                       pvdc_result_of(PVDC_ERR_DST_RECT, primary), &before);
    refuse_plane_value(&t, 0, primary, PVDC_PS_DST_SIZE, PVDC_XY(MODE_W, 0),
                       pvdc_result_of(PVDC_ERR_DST_RECT, primary), &before);
    /* A scale factor of infinity: refused. */
    refuse_plane_value(&t, 0, primary, PVDC_PS_DST_SIZE, PVDC_XY(1, 1),
                       pvdc_result_of(PVDC_ERR_SCALE_RATIO, primary), &before);
    /*
     * One of zero (1/65536 pixel across the head): upscaling has no
     * limit, so it applies, and composes.
     */
    pvdc_wr_plane(&t, primary, PVDC_PS_SRC_W, 1);
    g_assert_cmphex(pvdc_commit(&t, 0), ==, PVDC_RESULT_APPLIED);
    (void)current_crc(&t);
    pvdc_compose_again(&t, 0);
    pvdc_wr_plane(&t, primary, PVDC_PS_SRC_W, FP16(MODE_W));
    g_assert_cmphex(pvdc_commit(&t, 0), ==, PVDC_RESULT_APPLIED);
    pvdc_assert_still_works(&t, &before);
    pvdc_test_stop(&t);
}

/* ------------------------------------------------------------------------ */
/* The Cb:Cr plane of NV12 and P010: a second framebuffer layout            */
/* ------------------------------------------------------------------------ */

/*
 * Overlay 0 of head 0 shows a @w x @h @format framebuffer, Cb:Cr plane at
 * @chroma, both planes' pitches the smallest aligned ones.
 */
static void write_two_plane(PVDCTest *t, uint32_t format, uint32_t w,
                            uint32_t h, uint64_t offset, uint64_t chroma)
{
    unsigned int ov = pvdc_plane_of(t, 0, OVERLAY(0));
    uint32_t bps = format == PVDC_FMT_NV12 ? 2 : 4;

    pvdc_wr_plane(t, ov, PVDC_PS_HEAD, 0);
    pvdc_wr_plane(t, ov, PVDC_PS_ZPOS, 1);
    pvdc_wr_plane(t, ov, PVDC_PS_ALPHA, 0xffff);
    pvdc_write_fb(t, ov, format, offset, ROUND_UP(w * bps / 2, 64), w, h);
    pvdc_wr_plane(t, ov, PVDC_PS_CHROMA_OFFSET, chroma);
    pvdc_wr_plane(t, ov, PVDC_PS_CHROMA_PITCH,
                  ROUND_UP(DIV_ROUND_UP(w, 2) * bps, 64));
    pvdc_wr_plane(t, ov, PVDC_PS_CTRL, PVDC_PS_CTRL_ENABLE);
}

static void test_chroma_layout_is_refused(void)
{
    static const struct {
        uint32_t reg, val;
    } nv12_cases[] = {
        /* misaligned */
        { PVDC_PS_CHROMA_OFFSET, 0x22 },
        { PVDC_PS_CHROMA_OFFSET, 0xffffffff },
        { PVDC_PS_CHROMA_PITCH, 0x62 },
        /* too small: 32 samples of 2 bytes a line */
        { PVDC_PS_CHROMA_PITCH, 0 },
        { PVDC_PS_CHROMA_PITCH, 0x20 },
        /* near 2^32, and at and past the end of VRAM */
        { PVDC_PS_CHROMA_OFFSET, 0xffffffc0 },
        { PVDC_PS_CHROMA_OFFSET, 0x80000000 },
        { PVDC_PS_CHROMA_OFFSET, 16 * MiB },
        { PVDC_PS_CHROMA_OFFSET, 16 * MiB - 64 * 24 + 64 },
        /* offset + pitch * 23 past 2^32 */
        { PVDC_PS_CHROMA_PITCH, 0xffffffc0 },
        { PVDC_PS_CHROMA_PITCH, 0x80000000 },
        /* ... to 2^32 - 1 KiB + 2 MiB: inside VRAM in 32 bits */
        { PVDC_PS_CHROMA_PITCH, 0x0b216400 },
    };
    unsigned int ov, primary, cursor;
    PVDCSnapshot before;
    PVDCTest t;
    uint64_t v;

    start_good(&t, "vram-size=16M", &before);
    v = t.vram_size;
    ov = pvdc_plane_of(&t, 0, OVERLAY(0));
    primary = pvdc_plane_of(&t, 0, PRIMARY);
    cursor = pvdc_cursor_of(&t, 0);

    /* 64x48 NV12: 24 Cb:Cr lines of 64 bytes */
    write_two_plane(&t, PVDC_FMT_NV12, MODE_W, MODE_H, 1 * MiB, 2 * MiB);
    for (int i = 0; i < ARRAY_SIZE(nv12_cases); i++) {
        refuse_plane_value(&t, 0, ov, nv12_cases[i].reg, nv12_cases[i].val,
                           pvdc_result_of(PVDC_ERR_CHROMA, ov), &before);
    }
    /*
     * 33 lines, 17 of Cb:Cr: offset + pitch * 16 is exactly 2^32, and
     * the Cb:Cr plane would fit VRAM in 32 bits.
     */
    write_two_plane(&t, PVDC_FMT_NV12, MODE_W, 33, 1 * MiB, 0);
    refuse_plane_value(&t, 0, ov, PVDC_PS_CHROMA_PITCH, 0x10000000,
                       pvdc_result_of(PVDC_ERR_CHROMA, ov), &before);
    pvdc_wr_plane(&t, ov, PVDC_PS_CHROMA_OFFSET, 0x80000000);
    refuse_plane_value(&t, 0, ov, PVDC_PS_CHROMA_PITCH, 0x08000000,
                       pvdc_result_of(PVDC_ERR_CHROMA, ov), &before);
    /* P010 samples are 4 bytes: 64 pixels need 128 bytes a line */
    write_two_plane(&t, PVDC_FMT_P010, MODE_W, MODE_H, 1 * MiB, 2 * MiB);
    refuse_plane_value(&t, 0, ov, PVDC_PS_CHROMA_PITCH, 64,
                       pvdc_result_of(PVDC_ERR_CHROMA, ov), &before);
    refuse_plane_value(&t, 0, ov, PVDC_PS_CHROMA_OFFSET, v - 128 * 24 + 64,
                       pvdc_result_of(PVDC_ERR_CHROMA, ov), &before);
    /* COLOR_ENCODING 3 */
    refuse_plane_value(&t, 0, ov, PVDC_PS_CTRL, PVDC_PS_CTRL_ENABLE |
                       PVDC_PS_CTRL_COLOR_ENCODING_MASK <<
                       PVDC_PS_CTRL_COLOR_ENCODING_SHIFT |
                       PVDC_PS_CTRL_COLOR_RANGE_FULL,
                       pvdc_result_of(PVDC_ERR_PLANE_CTRL, ov), &before);
    pvdc_wr_plane(&t, ov, PVDC_PS_CTRL, 0);

    /* The two-plane formats on a primary and a cursor plane. */
    refuse_plane_value(&t, 0, primary, PVDC_PS_FORMAT, PVDC_FMT_NV12,
                       pvdc_result_of(PVDC_ERR_FORMAT, primary), &before);
    refuse_plane_value(&t, 0, primary, PVDC_PS_FORMAT, PVDC_FMT_P010,
                       pvdc_result_of(PVDC_ERR_FORMAT, primary), &before);
    pvdc_wr_plane(&t, cursor, PVDC_PS_HEAD, 0);
    pvdc_wr_plane(&t, cursor, PVDC_PS_ZPOS, t.overlays + 1);
    pvdc_write_fb(&t, cursor, PVDC_FMT_NV12, 0, 64, 32, 32);
    pvdc_wr_plane(&t, cursor, PVDC_PS_CHROMA_OFFSET, 2 * MiB);
    pvdc_wr_plane(&t, cursor, PVDC_PS_CHROMA_PITCH, 64);
    refuse_plane_value(&t, 0, cursor, PVDC_PS_CTRL, PVDC_PS_CTRL_ENABLE,
                       pvdc_result_of(PVDC_ERR_FORMAT, cursor), &before);
    pvdc_wr_plane(&t, cursor, PVDC_PS_FORMAT, PVDC_FMT_P010);
    refuse_plane_value(&t, 0, cursor, PVDC_PS_CTRL, PVDC_PS_CTRL_ENABLE,
                       pvdc_result_of(PVDC_ERR_FORMAT, cursor), &before);

    /*
     * Odd sizes are fine, and the Cb:Cr plane may end on the last byte of
     * VRAM (63x47: 24 lines of 32 samples): applied and composed, the
     * guard page after VRAM catching a read too far.
     */
    g_free(pvdc_fill_vram(&t, v - 64 * 23 - 64, 64 * 23 + 64, 5));
    g_free(pvdc_fill_vram(&t, 1 * MiB, 64 * 47, 6));
    write_two_plane(&t, PVDC_FMT_NV12, 63, 47, 1 * MiB, v - 64 * 23 - 64);
    g_assert_cmphex(pvdc_commit(&t, 0), ==, PVDC_RESULT_APPLIED);
    (void)current_crc(&t);
    pvdc_compose_again(&t, 0);
    g_free(pvdc_fill_vram(&t, v - 128 * 23 - 128, 128 * 23 + 128, 7));
    write_two_plane(&t, PVDC_FMT_P010, 63, 47, 1 * MiB, v - 128 * 23 - 128);
    pvdc_wr_plane(&t, ov, PVDC_PS_CTRL, PVDC_PS_CTRL_ENABLE |
                  PVDC_PS_CTRL_REFLECT_Y | PVDC_PS_CTRL_FILTER_BILINEAR |
                  PVDC_COLOR_BT2020 << PVDC_PS_CTRL_COLOR_ENCODING_SHIFT);
    pvdc_wr_plane(&t, ov, PVDC_PS_DST_SIZE, PVDC_XY(60, 40));
    g_assert_cmphex(pvdc_commit(&t, 0), ==, PVDC_RESULT_APPLIED);
    (void)current_crc(&t);
    pvdc_compose_again(&t, 0);
    pvdc_wr_plane(&t, ov, PVDC_PS_CTRL, 0);
    g_assert_cmphex(pvdc_commit(&t, 0), ==, PVDC_RESULT_APPLIED);

    /* RGB formats ignore the chroma registers, whatever they hold. */
    pvdc_wr_plane(&t, primary, PVDC_PS_CHROMA_OFFSET, 0xffffffff);
    pvdc_wr_plane(&t, primary, PVDC_PS_CHROMA_PITCH, 0xffffffff);
    g_assert_cmphex(pvdc_commit(&t, 0), ==, PVDC_RESULT_APPLIED);
    pvdc_wr_plane(&t, primary, PVDC_PS_CHROMA_OFFSET, 0);
    pvdc_wr_plane(&t, primary, PVDC_PS_CHROMA_PITCH, 0);
    g_assert_cmphex(pvdc_commit(&t, 0), ==, PVDC_RESULT_APPLIED);
    pvdc_snapshot_active(&t, &before);
    pvdc_assert_still_works(&t, &before);
    pvdc_test_stop(&t);
}

/*
 * The head state value @val in @reg with the stages @stages on head 0,
 * refused with @expected; the active state stays.
 */
static void refuse_color_value(PVDCTest *t, uint32_t stages, uint32_t reg,
                               uint32_t val, uint32_t expected,
                               const PVDCSnapshot *before)
{
    uint32_t good = pvdc_rd(t, PVDC_HEAD_SHADOW(0) + reg);

    pvdc_wr_head(t, 0, PVDC_HS_CTRL, PVDC_HS_CTRL_ENABLE | stages);
    pvdc_wr_head(t, 0, reg, val);
    g_assert_cmphex(pvdc_commit(t, 0), ==, expected);
    pvdc_assert_active_is(t, before);
    pvdc_wr_head(t, 0, reg, good);
    pvdc_wr_head(t, 0, PVDC_HS_CTRL, PVDC_HS_CTRL_ENABLE);
}

/* Where the writeback cases look for bytes written that should not be. */
#define WB_WATCH_LEN        (64 * KiB)

typedef struct WbWatch {
    uint64_t offset[3];
    uint8_t *data[3];
} WbWatch;

/* Patterns at the start, the middle and the end of VRAM, kept. */
static void wb_watch(PVDCTest *t, WbWatch *w)
{
    w->offset[0] = PVDC_FLIP_OFFSET;
    w->offset[1] = t->vram_size / 2;
    w->offset[2] = t->vram_size - WB_WATCH_LEN;
    for (int i = 0; i < 3; i++) {
        w->data[i] = pvdc_fill_vram(t, w->offset[i], WB_WATCH_LEN, 40 + i);
    }
}

/* The patterns are still there, but the last @spared bytes of VRAM. */
static void wb_watch_unchanged(PVDCTest *t, WbWatch *w, size_t spared)
{
    g_autofree uint8_t *now = g_malloc(WB_WATCH_LEN);

    for (unsigned int i = 0; i < 3; i++) {
        size_t len = WB_WATCH_LEN - (i == 2 ? spared : 0);

        qtest_memread(t->qts, t->vram.addr + w->offset[i], now, len);
        g_assert(memcmp(now, w->data[i], len) == 0);
    }
}

static void wb_watch_free(WbWatch *w)
{
    for (int i = 0; i < 3; i++) {
        g_free(w->data[i]);
    }
}

/*
 * The target @format, @offset, @pitch with WRITEBACK on head @head
 * (enabled with HS_CTRL @ctrl): refused with PVDC_ERR_WRITEBACK, nothing
 * written, the active state unchanged.
 */
static void refuse_wb(PVDCTest *t, unsigned int head, uint32_t ctrl,
                      uint32_t format, uint32_t offset, uint32_t pitch,
                      const PVDCSnapshot *before, WbWatch *watch)
{
    pvdc_wr_head(t, head, PVDC_HS_WB_FORMAT, format);
    pvdc_wr_head(t, head, PVDC_HS_WB_OFFSET, offset);
    pvdc_wr_head(t, head, PVDC_HS_WB_PITCH, pitch);
    pvdc_wr_head(t, head, PVDC_HS_CTRL, ctrl | PVDC_HS_CTRL_WRITEBACK);
    g_assert_cmphex(pvdc_commit(t, head), ==,
                    pvdc_head_result(PVDC_ERR_WRITEBACK));
    pvdc_assert_active_is(t, before);
    wb_watch_unchanged(t, watch, 0);
}

/*
 * Writeback targets a guest cannot use: offsets near 2^32, a pitch whose
 * product with the height wraps 2^32, an end past VRAM by the least an
 * aligned layout allows (64 bytes; 4, a pixel, with a 65-pixel mode: a
 * single byte cannot be, pixels being 4 bytes at aligned offsets),
 * misaligned offset or pitch, a pitch shorter than a line, formats not
 * taken, a disabled head.  Each is refused with PVDC_ERR_WRITEBACK,
 * writes nothing and leaves the device working; a target ending on the
 * last byte of VRAM is taken and written up to that byte, the guard page
 * after VRAM catching a write too far.
 */
static void test_writeback_targets_are_refused(void)
{
    static const uint32_t not_taken[] = {
        0, PVDC_FMT_RGB565, PVDC_FMT_NV12, PVDC_FMT_YUYV, PVDC_FMT_P010,
        PVDC_FOURCC('A', 'B', '2', '4') ^ 0x20,
    };
    /* (pitch * 47) mod 2^32 = 64: the 32-bit end would be near offset */
    const uint32_t wrapping_pitch = 0xdf51b3c0;
    uint32_t on = PVDC_HS_CTRL_ENABLE, last, v;
    uint64_t frame = (uint64_t)MODE_PITCH * (MODE_H - 1) + MODE_PITCH;
    uint32_t line65 = 65 * 4, pitch65 = ROUND_UP(line65, 64);
    PVDCSnapshot before;
    WbWatch watch;
    PVDCTest t;

    start_good(&t, "vram-size=16M", &before);
    v = t.vram_size;
    wb_watch(&t, &watch);
    g_assert_cmphex((uint32_t)(wrapping_pitch * (MODE_H - 1)), ==, 64);

    refuse_wb(&t, 0, on, PVDC_FMT_XRGB8888, 0xffffffc0, MODE_PITCH,
              &before, &watch);
    refuse_wb(&t, 0, on, PVDC_FMT_XRGB8888, (uint32_t)(0x100000000 - frame),
              MODE_PITCH, &before, &watch);
    refuse_wb(&t, 0, on, PVDC_FMT_XRGB8888, 0x80000000, MODE_PITCH,
              &before, &watch);
    refuse_wb(&t, 0, on, PVDC_FMT_ARGB8888, 0, wrapping_pitch, &before,
              &watch);
    refuse_wb(&t, 0, on, PVDC_FMT_ARGB8888, 1 * MiB, 0xffffffc0, &before,
              &watch);
    refuse_wb(&t, 0, on, PVDC_FMT_XBGR8888, v - frame + 64, MODE_PITCH,
              &before, &watch);
    refuse_wb(&t, 0, on, PVDC_FMT_XBGR8888, v, MODE_PITCH, &before, &watch);
    refuse_wb(&t, 0, on, PVDC_FMT_ABGR8888, 1 * MiB + 2, MODE_PITCH,
              &before, &watch);
    refuse_wb(&t, 0, on, PVDC_FMT_ABGR8888, 1 * MiB + 1, MODE_PITCH,
              &before, &watch);
    refuse_wb(&t, 0, on, PVDC_FMT_XRGB8888, 1 * MiB, MODE_PITCH + 2,
              &before, &watch);
    refuse_wb(&t, 0, on, PVDC_FMT_XRGB8888, 1 * MiB, MODE_PITCH - 64,
              &before, &watch);
    refuse_wb(&t, 0, on, PVDC_FMT_XRGB8888, 1 * MiB, 0, &before, &watch);
    for (unsigned int i = 0; i < ARRAY_SIZE(not_taken); i++) {
        refuse_wb(&t, 0, on, not_taken[i], 1 * MiB, MODE_PITCH, &before,
                  &watch);
    }
    /* a disabled head, and one this commit disables: no frame to write */
    refuse_wb(&t, 1, 0, PVDC_FMT_XRGB8888, 1 * MiB, MODE_PITCH, &before,
              &watch);
    pvdc_wr_plane(&t, pvdc_plane_of(&t, 0, PRIMARY), PVDC_PS_CTRL, 0);
    refuse_wb(&t, 0, 0, PVDC_FMT_XRGB8888, 1 * MiB, MODE_PITCH, &before,
              &watch);
    pvdc_wr_plane(&t, pvdc_plane_of(&t, 0, PRIMARY), PVDC_PS_CTRL,
                  PVDC_PS_CTRL_ENABLE);
    /* head 1 being enabled with 65 pixels a line, one pixel too far */
    pvdc_write_mode_sized(&t, 1, 65, MODE_H, MODE_HTOTAL, MODE_VTOTAL,
                          CLOCK_1MS);
    refuse_wb(&t, 1, on, PVDC_FMT_XRGB8888,
              v - pitch65 * (MODE_H - 1) - pitch65 + 64, pitch65, &before,
              &watch);
    pvdc_wr_head(&t, 1, PVDC_HS_CTRL, 0);
    pvdc_wr_head(&t, 0, PVDC_HS_CTRL, on);
    /* latched as written, used only with WRITEBACK: as they were */
    pvdc_wr_head(&t, 0, PVDC_HS_WB_FORMAT, 0);
    pvdc_wr_head(&t, 0, PVDC_HS_WB_OFFSET, 0);
    pvdc_wr_head(&t, 0, PVDC_HS_WB_PITCH, 0);
    pvdc_assert_still_works(&t, &before);

    /* ending on the last byte of VRAM: written up to it, nothing else */
    pvdc_wr_head(&t, 0, PVDC_HS_WB_FORMAT, PVDC_FMT_ABGR8888);
    pvdc_wr_head(&t, 0, PVDC_HS_WB_OFFSET, v - frame);
    pvdc_wr_head(&t, 0, PVDC_HS_WB_PITCH, MODE_PITCH);
    pvdc_wr_head(&t, 0, PVDC_HS_CTRL, on | PVDC_HS_CTRL_WRITEBACK);
    g_assert_cmphex(pvdc_commit(&t, 0), ==, PVDC_RESULT_APPLIED);
    last = qtest_readl(t.qts, t.vram.addr + v - 4);
    g_assert_cmphex(last >> 24, ==, 0xff);
    wb_watch_unchanged(&t, &watch, frame);
    (void)current_crc(&t);
    wb_watch_free(&watch);
    pvdc_test_stop(&t);
}

/*
 * LUT sizes and colour offsets a guest cannot use: sizes outside
 * 2..LUT_SIZE, offsets misaligned, past VRAM, near 2^32, or whose end
 * wraps in 32 bits.  PVDC_ERR_COLOR every time, for each stage; a stage
 * whose bit is clear ignores its registers, and tables at the very end of
 * VRAM are taken and composed.
 */
static void test_color_tables_are_refused(void)
{
    static const uint32_t bad_sizes[] = {
        0, 1, PVDC_LUT_MAX_SIZE + 1, 0x8000, 0xffff,
    };
    uint32_t color_err = pvdc_head_result(PVDC_ERR_COLOR);
    uint32_t lut_size, v, bad_lut[16];
    PVDCSnapshot before;
    unsigned int n = 0;
    PVDCTest t;

    start_good(&t, "vram-size=16M", &before);
    v = t.vram_size;
    lut_size = pvdc_rd(&t, PVDC_REG_LUT_SIZE);
    g_assert_cmphex(lut_size, ==,
                    PVDC_XY(PVDC_LUT_MAX_SIZE, PVDC_LUT_MAX_SIZE));
    pvdc_wr_head(&t, 0, PVDC_HS_LUT_SIZES, PVDC_XY(256, 256));
    pvdc_wr_head(&t, 0, PVDC_HS_DEGAMMA_LUT, 1 * MiB);
    pvdc_wr_head(&t, 0, PVDC_HS_CTM, 2 * MiB);
    pvdc_wr_head(&t, 0, PVDC_HS_GAMMA_LUT, 3 * MiB);

    /* 256 entries are 2 KiB: offsets that cannot hold them */
    bad_lut[n++] = 4;                       /* misaligned */
    bad_lut[n++] = 1 * MiB + 1;
    bad_lut[n++] = 0xfffffff8;              /* near 2^32: wraps to 0x7f8 */
    bad_lut[n++] = 0xfffff800;              /* ends exactly at 2^32 */
    bad_lut[n++] = 0x80000000;
    bad_lut[n++] = v;                       /* at the end of VRAM */
    bad_lut[n++] = v - 2 * KiB + 8;         /* one entry past it */
    for (unsigned int i = 0; i < n; i++) {
        refuse_color_value(&t, PVDC_HS_CTRL_DEGAMMA, PVDC_HS_DEGAMMA_LUT,
                           bad_lut[i], color_err, &before);
        refuse_color_value(&t, PVDC_HS_CTRL_GAMMA, PVDC_HS_GAMMA_LUT,
                           bad_lut[i], color_err, &before);
    }
    /* the matrix is 72 bytes */
    refuse_color_value(&t, PVDC_HS_CTRL_CTM, PVDC_HS_CTM, 2 * MiB + 4,
                       color_err, &before);
    refuse_color_value(&t, PVDC_HS_CTRL_CTM, PVDC_HS_CTM, 0xfffffff8,
                       color_err, &before);
    refuse_color_value(&t, PVDC_HS_CTRL_CTM, PVDC_HS_CTM, v - 64,
                       color_err, &before);
    refuse_color_value(&t, PVDC_HS_CTRL_CTM, PVDC_HS_CTM, v, color_err,
                       &before);
    /* sizes, of either LUT */
    for (unsigned int i = 0; i < ARRAY_SIZE(bad_sizes); i++) {
        refuse_color_value(&t, PVDC_HS_CTRL_DEGAMMA, PVDC_HS_LUT_SIZES,
                           PVDC_XY(bad_sizes[i], 256), color_err, &before);
        refuse_color_value(&t, PVDC_HS_CTRL_GAMMA, PVDC_HS_LUT_SIZES,
                           PVDC_XY(256, bad_sizes[i]), color_err, &before);
    }
    /* the largest LUT ending one entry past VRAM, and at 2^32 + 8 */
    pvdc_wr_head(&t, 0, PVDC_HS_LUT_SIZES, PVDC_XY(4096, 4096));
    refuse_color_value(&t, PVDC_HS_CTRL_GAMMA, PVDC_HS_GAMMA_LUT,
                       v - 32 * KiB + 8, color_err, &before);
    refuse_color_value(&t, PVDC_HS_CTRL_DEGAMMA, PVDC_HS_DEGAMMA_LUT,
                       0xffff8008, color_err, &before);

    /* A stage whose bit is clear ignores its registers. */
    pvdc_wr_head(&t, 0, PVDC_HS_LUT_SIZES, PVDC_XY(0xffff, 1));
    pvdc_wr_head(&t, 0, PVDC_HS_DEGAMMA_LUT, 0xffffffff);
    pvdc_wr_head(&t, 0, PVDC_HS_CTM, 0xfffffffc);
    pvdc_wr_head(&t, 0, PVDC_HS_GAMMA_LUT, 3);
    g_assert_cmphex(pvdc_commit(&t, 0), ==, PVDC_RESULT_APPLIED);

    /*
     * The largest tables and the matrix ending on the last byte of VRAM:
     * applied and composed, the guard page after VRAM catching a read
     * too far.
     */
    g_free(pvdc_fill_vram(&t, v - 64 * KiB - 72, 64 * KiB + 72, 9));
    pvdc_wr_head(&t, 0, PVDC_HS_LUT_SIZES, PVDC_XY(4096, 4096));
    pvdc_wr_head(&t, 0, PVDC_HS_DEGAMMA_LUT, v - 64 * KiB - 72);
    pvdc_wr_head(&t, 0, PVDC_HS_CTM, v - 72);
    pvdc_wr_head(&t, 0, PVDC_HS_GAMMA_LUT, v - 32 * KiB - 72);
    pvdc_wr_head(&t, 0, PVDC_HS_CTRL, PVDC_HS_CTRL_ENABLE | COLOR_STAGES);
    g_assert_cmphex(pvdc_commit(&t, 0), ==, PVDC_RESULT_APPLIED);
    (void)current_crc(&t);
    pvdc_compose_again(&t, 0);
    /* the smallest, at offset 0 */
    pvdc_wr_head(&t, 0, PVDC_HS_LUT_SIZES, PVDC_XY(2, 2));
    pvdc_wr_head(&t, 0, PVDC_HS_DEGAMMA_LUT, 0);
    pvdc_wr_head(&t, 0, PVDC_HS_CTM, 0);
    pvdc_wr_head(&t, 0, PVDC_HS_GAMMA_LUT, 0);
    g_assert_cmphex(pvdc_commit(&t, 0), ==, PVDC_RESULT_APPLIED);
    (void)current_crc(&t);
    pvdc_compose_again(&t, 0);
    /* refused while a pipeline is active: the active one stays */
    pvdc_snapshot_active(&t, &before);
    refuse_color_value(&t, COLOR_STAGES,
                       PVDC_HS_LUT_SIZES, PVDC_XY(2, 0xffff), color_err,
                       &before);
    pvdc_wr_head(&t, 0, PVDC_HS_CTRL, PVDC_HS_CTRL_ENABLE);
    pvdc_wr_head(&t, 0, PVDC_HS_LUT_SIZES, 0);
    g_assert_cmphex(pvdc_commit(&t, 0), ==, PVDC_RESULT_APPLIED);
    pvdc_snapshot_active(&t, &before);
    pvdc_assert_still_works(&t, &before);
    pvdc_test_stop(&t);
}

/*
 * Upscaling has no limit: a source of 1/65536 pixel, of one pixel and of
 * 20x20 of every format fills the largest destination (16384 x 16384),
 * rotated, reflected and filtered, seen through a 64x48 head at either
 * end of it.  Applied, and composed without dividing by zero or
 * overflowing, at a cost that follows the head.
 */
static void test_tiny_sources_fill_the_largest_destination(void)
{
    static const uint32_t ctrls[] = {
        0, PVDC_PS_CTRL_ROTATE_180 | PVDC_PS_CTRL_FILTER_BILINEAR,
        PVDC_PS_CTRL_REFLECT_X | PVDC_PS_CTRL_FILTER_BILINEAR |
        PVDC_BLEND_COVERAGE << PVDC_PS_CTRL_BLEND_SHIFT,
    };
    static const uint32_t srcs[] = { 1, FP16(1), FP16(20) };
    unsigned int ov;
    PVDCSnapshot before;
    PVDCTest t;

    start_good(&t, LARGE_PROPS, &before);
    ov = pvdc_plane_of(&t, 0, OVERLAY(0));
    g_free(pvdc_fill_vram(&t, 1 * MiB, 2 * MiB, 9));
    pvdc_wr_plane(&t, ov, PVDC_PS_HEAD, 0);
    pvdc_wr_plane(&t, ov, PVDC_PS_ZPOS, 1);
    pvdc_wr_plane(&t, ov, PVDC_PS_ALPHA, 0xc000);
    for (int f = 0; f < ARRAY_SIZE(pvdc_formats); f++) {
        for (int i = 0; i < ARRAY_SIZE(srcs); i++) {
            for (int c = 0; c < ARRAY_SIZE(ctrls); c++) {
                pvdc_write_fb(&t, ov, pvdc_formats[f], 1 * MiB, 128, 20, 20);
                pvdc_wr_plane(&t, ov, PVDC_PS_CHROMA_OFFSET, 2 * MiB);
                pvdc_wr_plane(&t, ov, PVDC_PS_CHROMA_PITCH, 128);
                pvdc_wr_plane(&t, ov, PVDC_PS_SRC_X, FP16(20) - srcs[i]);
                pvdc_wr_plane(&t, ov, PVDC_PS_SRC_W, srcs[i]);
                pvdc_wr_plane(&t, ov, PVDC_PS_SRC_H, srcs[i]);
                pvdc_wr_plane(&t, ov, PVDC_PS_DST_SIZE, PVDC_XY(16384, 16384));
                pvdc_wr_plane(&t, ov, PVDC_PS_DST_POS,
                              c % 2 ? PVDC_XY(S16(MODE_W - 16384),
                                              S16(MODE_H - 16384)) : 0);
                pvdc_wr_plane(&t, ov, PVDC_PS_CTRL,
                              PVDC_PS_CTRL_ENABLE | ctrls[c]);
                g_assert_cmphex(pvdc_commit(&t, 0), ==, PVDC_RESULT_APPLIED);
                (void)current_crc(&t);
                pvdc_compose_again(&t, 0);
            }
        }
    }
    pvdc_wr_plane(&t, ov, PVDC_PS_CTRL, 0);
    g_assert_cmphex(pvdc_commit(&t, 0), ==, PVDC_RESULT_APPLIED);
    pvdc_snapshot_active(&t, &before);
    pvdc_assert_still_works(&t, &before);
    pvdc_test_stop(&t);
}

/* A head disabled with its vblank interrupt and CRC on: period 0. */
static void test_disabled_head_keeps_no_timer(void)
{
    unsigned int primary;
    PVDCSnapshot before;
    PVDCTest t;

    pvdc_test_start(&t, NULL);
    primary = pvdc_plane_of(&t, 0, PRIMARY);
    pvdc_enable_good_head0(&t);

    pvdc_wr(&t, PVDC_REG_INT_ENABLE, PVDC_INT(0, PVDC_INT_VBLANK));
    pvdc_wr(&t, PVDC_HEAD_CONTROL(0) + PVDC_HEAD_CRC_CTRL,
            PVDC_CRC_CTRL_ENABLE);
    pvdc_step_to(&t, t.now + 3 * PERIOD_1MS);
    pvdc_wr_head(&t, 0, PVDC_HS_CTRL, 0);
    pvdc_wr_plane(&t, primary, PVDC_PS_CTRL, 0);
    g_assert_cmphex(pvdc_commit(&t, 0), ==, PVDC_RESULT_APPLIED);
    g_assert_cmpuint(pvdc_head_ctl(&t, 0, PVDC_HEAD_FRAME_PERIOD), ==, 0);
    {
        uint64_t cb = pvdc_timer_callbacks(&t);
        uint32_t count = pvdc_head_ctl(&t, 0, PVDC_HEAD_VBLANK_COUNT);

        pvdc_step_to(&t, t.now + 20 * PERIOD_1MS);
        g_assert_cmpuint(pvdc_timer_callbacks(&t), ==, cb);
        g_assert_cmpuint(pvdc_head_ctl(&t, 0, PVDC_HEAD_VBLANK_COUNT), ==,
                         count);
    }
    pvdc_compose_again(&t, 0);
    pvdc_wr(&t, PVDC_REG_INT_ENABLE, 0);
    pvdc_wr(&t, PVDC_HEAD_CONTROL(0) + PVDC_HEAD_CRC_CTRL, 0);

    pvdc_enable_good_head0(&t);
    pvdc_snapshot_active(&t, &before);
    pvdc_assert_still_works(&t, &before);
    pvdc_test_stop(&t);
}

/* ------------------------------------------------------------------------ */
/* CVE-2020-11869, CVE-2021-3638: huge and negative rectangles              */
/* ------------------------------------------------------------------------ */

static void test_huge_and_negative_rectangles_are_refused(void)
{
    static const PlaneValue refused[] = {
        { PVDC_PS_SRC_X, 0xffff0000, PVDC_ERR_SRC_RECT },
        { PVDC_PS_SRC_X, 0x80000000, PVDC_ERR_SRC_RECT },
        { PVDC_PS_SRC_Y, 0xffffffff, PVDC_ERR_SRC_RECT },
        { PVDC_PS_SRC_W, 0xffffffff, PVDC_ERR_SRC_RECT },
        { PVDC_PS_SRC_H, FP16(MODE_H) + 1, PVDC_ERR_SRC_RECT },
        { PVDC_PS_SRC_X, 0x8000, PVDC_ERR_SRC_RECT },
        { PVDC_PS_DST_SIZE, 0xffffffff, PVDC_ERR_DST_RECT },
        { PVDC_PS_DST_SIZE, PVDC_XY(4097, MODE_H), PVDC_ERR_DST_RECT },
        { PVDC_PS_DST_POS, PVDC_XY(S16(-4097), 0), PVDC_ERR_DST_RECT },
        { PVDC_PS_DST_POS, PVDC_XY(0, S16(-32768)), PVDC_ERR_DST_RECT },
        { PVDC_PS_DST_POS, PVDC_XY(4097, 4097), PVDC_ERR_DST_RECT },
        { PVDC_PS_FB_SIZE, PVDC_XY(0xffff, 0xffff), PVDC_ERR_FB_SIZE },
    };
    unsigned int primary;
    PVDCSnapshot before;
    PVDCTest t;

    start_good(&t, "vram-size=16M", &before);
    primary = pvdc_plane_of(&t, 0, PRIMARY);
    refuse_plane_values(&t, 0, primary, refused, ARRAY_SIZE(refused),
                        &before);
    pvdc_assert_still_works(&t, &before);
    pvdc_test_stop(&t);
}

/*
 * Sources of less than a pixel at the bottom-right corner of a
 * framebuffer, magnified, filtered, rotated and blended: composed without
 * sampling past it.
 */
static void show_subpixel_corner(PVDCTest *t, unsigned int primary)
{
    pvdc_wr_plane(t, primary, PVDC_PS_DST_POS, PVDC_XY(10, 10));
    pvdc_wr_plane(t, primary, PVDC_PS_SRC_X, FP16(MODE_W) - 0x8000);
    pvdc_wr_plane(t, primary, PVDC_PS_SRC_Y, FP16(MODE_H) - 0x8000);
    pvdc_wr_plane(t, primary, PVDC_PS_SRC_W, 0x8000);
    pvdc_wr_plane(t, primary, PVDC_PS_SRC_H, 0x8000);
    pvdc_wr_plane(t, primary, PVDC_PS_DST_SIZE, PVDC_XY(4, 4));
    pvdc_wr_plane(t, primary, PVDC_PS_CTRL,
                  PVDC_PS_CTRL_ENABLE | PVDC_PS_CTRL_FILTER_BILINEAR);
    g_assert_cmphex(pvdc_commit(t, 0), ==, PVDC_RESULT_APPLIED);
    (void)current_crc(t);
    pvdc_compose_again(t, 0);
    /* The same, rotated, reflected and blended. */
    pvdc_wr_plane(t, primary, PVDC_PS_CTRL,
                  PVDC_PS_CTRL_ENABLE | PVDC_PS_CTRL_FILTER_BILINEAR |
                  PVDC_PS_CTRL_ROTATE_180 | PVDC_PS_CTRL_REFLECT_Y |
                  PVDC_BLEND_COVERAGE << PVDC_PS_CTRL_BLEND_SHIFT);
    pvdc_wr_plane(t, primary, PVDC_PS_ALPHA, 0x1234);
    g_assert_cmphex(pvdc_commit(t, 0), ==, PVDC_RESULT_APPLIED);
    (void)current_crc(t);
    pvdc_compose_again(t, 0);
    /* A 1/65536-pixel-wide source at the last column, 1/8 px at least. */
    pvdc_wr_plane(t, primary, PVDC_PS_SRC_X, FP16(MODE_W) - 0x2000);
    pvdc_wr_plane(t, primary, PVDC_PS_SRC_W, 0x2000);
    pvdc_wr_plane(t, primary, PVDC_PS_DST_SIZE, PVDC_XY(1, 4));
    g_assert_cmphex(pvdc_commit(t, 0), ==, PVDC_RESULT_APPLIED);
    (void)current_crc(t);
    pvdc_compose_again(t, 0);
}

/*
 * Valid rectangles on the edges, wholly or partly off-screen, over a
 * framebuffer that ends on the last byte of VRAM (reading one pixel too
 * far crashes): clipped, and shown exactly.
 */
static void test_offscreen_rectangles_are_clipped(void)
{
    /* Valid, on the edges: wholly or partly off-screen, clipped. */
    static const struct {
        int x, y;
        uint32_t w, h;
    } clipped[] = {
        { -4096, -4096, MODE_W, MODE_H },
        { 4096, 4096, MODE_W, MODE_H },
        { -MODE_W + 1, -MODE_H + 1, MODE_W, MODE_H },
        { MODE_W - 1, MODE_H - 1, MODE_W, MODE_H },
        { -4096, 0, 4096, MODE_H },
        { MODE_W, MODE_H, 4096, 4096 },
        { -480, -360, 4096, 4096 },
    };
    const uint32_t background = 0x00203040;
    unsigned int primary;
    PVDCSnapshot before;
    PVDCTest t;
    uint64_t fb;
    g_autofree uint8_t *data = NULL;
    g_autofree uint32_t *px = g_new(uint32_t, MODE_W * MODE_H);

    start_good(&t, "vram-size=16M,max-height=4096", &before);
    primary = pvdc_plane_of(&t, 0, PRIMARY);
    fb = t.vram_size - MODE_PITCH * MODE_H;
    data = pvdc_fill_vram(&t, fb, MODE_PITCH * MODE_H, 11);
    pvdc_wr_head(&t, 0, PVDC_HS_BACKGROUND, background);
    pvdc_wr_plane(&t, primary, PVDC_PS_FB_OFFSET, fb);
    for (int i = 0; i < ARRAY_SIZE(clipped); i++) {
        uint32_t scaled = clipped[i].w != MODE_W;

        pvdc_wr_plane(&t, primary, PVDC_PS_DST_POS,
                      PVDC_XY(S16(clipped[i].x), S16(clipped[i].y)));
        pvdc_wr_plane(&t, primary, PVDC_PS_DST_SIZE,
                      PVDC_XY(clipped[i].w, clipped[i].h));
        pvdc_wr_plane(&t, primary, PVDC_PS_CTRL, PVDC_PS_CTRL_ENABLE |
                      (scaled ? PVDC_PS_CTRL_FILTER_BILINEAR : 0));
        if (scaled) {
            /* 64x48 to 4096x4096 is beyond 8x: show its corner only. */
            pvdc_wr_plane(&t, primary, PVDC_PS_SRC_W, FP16(MODE_W));
            pvdc_wr_plane(&t, primary, PVDC_PS_SRC_H, FP16(MODE_H));
            pvdc_wr_plane(&t, primary, PVDC_PS_DST_SIZE,
                          PVDC_XY(MIN(clipped[i].w, 8 * MODE_W),
                                  MIN(clipped[i].h, 8 * MODE_H)));
        }
        g_assert_cmphex(pvdc_commit(&t, 0), ==, PVDC_RESULT_APPLIED);
        pvdc_compose_again(&t, 0);
        if (!scaled) {
            for (int y = 0; y < MODE_H; y++) {
                for (int x = 0; x < MODE_W; x++) {
                    int sx = x - clipped[i].x, sy = y - clipped[i].y;
                    bool in = sx >= 0 && sx < MODE_W && sy >= 0 &&
                              sy < MODE_H;

                    px[y * MODE_W + x] = in ?
                        ldl_le_p(data + sy * MODE_PITCH + sx * 4) :
                        background;
                }
            }
            g_assert_cmphex(current_crc(&t), ==,
                            pvdc_frame_crc(px, MODE_W * MODE_H));
        } else {
            (void)current_crc(&t);
        }
    }

    /* Half a pixel at the bottom-right corner, magnified and filtered. */
    show_subpixel_corner(&t, primary);

    pvdc_write_plane(&t, primary, 0, PVDC_GOOD_OFFSET, 0);
    pvdc_wr_head(&t, 0, PVDC_HS_BACKGROUND, 0);
    g_assert_cmphex(pvdc_commit(&t, 0), ==, PVDC_RESULT_APPLIED);
    pvdc_assert_still_works(&t, &before);
    pvdc_test_stop(&t);
}

/* ------------------------------------------------------------------------ */
/* CVE-2021-4206: cursor size overflow                                      */
/* ------------------------------------------------------------------------ */

static void test_cursor_size_overflow_is_refused(void)
{
    static const PlaneValue refused[] = {
        { PVDC_PS_DST_SIZE, PVDC_XY(257, 256), PVDC_ERR_CURSOR },
        { PVDC_PS_DST_SIZE, PVDC_XY(256, 257), PVDC_ERR_CURSOR },
        { PVDC_PS_DST_SIZE, PVDC_XY(4096, 4096), PVDC_ERR_CURSOR },
        { PVDC_PS_DST_SIZE, PVDC_XY(0x8000, 0x8000), PVDC_ERR_DST_RECT },
        { PVDC_PS_DST_SIZE, 0xffffffff, PVDC_ERR_DST_RECT },
        { PVDC_PS_DST_SIZE, PVDC_XY(128, 128), PVDC_ERR_CURSOR },
        { PVDC_PS_SRC_W, FP16(256) + 1, PVDC_ERR_SRC_RECT },
        { PVDC_PS_SRC_W, FP16(255), PVDC_ERR_CURSOR },
        { PVDC_PS_FB_SIZE, 0xffffffff, PVDC_ERR_FB_SIZE },
        { PVDC_PS_FB_PITCH, 0x40000000, PVDC_ERR_PITCH },
        { PVDC_PS_FB_OFFSET, 0xfffc0000, PVDC_ERR_FB_BOUNDS },
        { PVDC_PS_FORMAT, PVDC_FMT_XRGB8888, PVDC_ERR_FORMAT },
        { PVDC_PS_CTRL, PVDC_PS_CTRL_ENABLE | PVDC_PS_CTRL_ROTATE_180,
          PVDC_ERR_PLANE_CTRL },
        { PVDC_PS_CTRL, PVDC_PS_CTRL_ENABLE | PVDC_PS_CTRL_FILTER_BILINEAR,
          PVDC_ERR_PLANE_CTRL },
    };
    static const struct {
        int x, y;
        uint32_t hotspot;
    } positions[] = {
        { 0, 0, 0 },
        { -255, -255, PVDC_XY(255, 255) },
        { MODE_W - 1, MODE_H - 1, 0xffffffff },
        { 4096, 4096, PVDC_XY(0x8000, 0) },
        { -4096, -4096, 0 },
    };
    const uint32_t size = 256 * 256 * 4;
    unsigned int cursor;
    uint64_t fb;
    PVDCSnapshot before;
    PVDCTest t;

    /* host-cursor: the UI gets the cursor image, copied out of VRAM. */
    for (int host = 0; host < 2; host++) {
        /* max-height: a 4096x4096 destination is a cursor error */
        pvdc_test_start(&t, host ? "vram-size=16M,max-height=4096,"
                                   "host-cursor=on"
                                 : "vram-size=16M,max-height=4096");
        cursor = pvdc_cursor_of(&t, 0);
        pvdc_enable_good_head0(&t);
        pvdc_wr(&t, PVDC_HEAD_CONTROL(0) + PVDC_HEAD_CRC_CTRL,
                PVDC_CRC_CTRL_ENABLE);

        /* The largest cursor, ending on the last byte of VRAM. */
        fb = t.vram_size - size;
        g_free(pvdc_fill_vram(&t, fb, size, 5));
        pvdc_wr_plane(&t, cursor, PVDC_PS_HEAD, 0);
        pvdc_write_fb(&t, cursor, PVDC_FMT_ARGB8888, fb, 1024, 256, 256);
        pvdc_wr_plane(&t, cursor, PVDC_PS_ZPOS, t.overlays + 1);
        pvdc_wr_plane(&t, cursor, PVDC_PS_ALPHA, 0xffff);
        pvdc_wr_plane(&t, cursor, PVDC_PS_CTRL, PVDC_PS_CTRL_ENABLE |
                      PVDC_BLEND_PREMULTI << PVDC_PS_CTRL_BLEND_SHIFT);
        g_assert_cmphex(pvdc_commit(&t, 0), ==, PVDC_RESULT_APPLIED);
        pvdc_snapshot_active(&t, &before);

        refuse_plane_values(&t, 0, cursor, refused, ARRAY_SIZE(refused),
                            &before);

        for (int i = 0; i < ARRAY_SIZE(positions); i++) {
            pvdc_wr_plane(&t, cursor, PVDC_PS_DST_POS,
                          PVDC_XY(S16(positions[i].x), S16(positions[i].y)));
            pvdc_wr_plane(&t, cursor, PVDC_PS_HOTSPOT, positions[i].hotspot);
            g_assert_cmphex(pvdc_commit(&t, 0), ==, PVDC_RESULT_APPLIED);
            (void)current_crc(&t);
            pvdc_compose_again(&t, 0);
        }
        /* A sub-rectangle at the bottom-right, fractional origin. */
        pvdc_wr_plane(&t, cursor, PVDC_PS_SRC_X, FP16(192) + 0xffff);
        pvdc_wr_plane(&t, cursor, PVDC_PS_SRC_Y, FP16(192) + 0xffff);
        pvdc_wr_plane(&t, cursor, PVDC_PS_SRC_W, FP16(63));
        pvdc_wr_plane(&t, cursor, PVDC_PS_SRC_H, FP16(63));
        pvdc_wr_plane(&t, cursor, PVDC_PS_DST_SIZE, PVDC_XY(63, 63));
        pvdc_wr_plane(&t, cursor, PVDC_PS_DST_POS, PVDC_XY(10, 10));
        g_assert_cmphex(pvdc_commit(&t, 0), ==, PVDC_RESULT_APPLIED);
        (void)current_crc(&t);
        pvdc_compose_again(&t, 0);

        pvdc_snapshot_active(&t, &before);
        pvdc_assert_still_works(&t, &before);
        pvdc_test_stop(&t);
    }
}

/*
 * A two-line framebuffer with a 4 MiB pitch ending on the last byte of
 * VRAM passes the commit rules, but a surface of pitch * height bytes
 * would run 4 MiB past VRAM: it is composed, not handed to the UI.
 */
static void test_direct_scanout_stays_inside_vram(void)
{
    const uint32_t pitch = 4 * MiB, w = MODE_W, h = 2;
    unsigned int primary;
    g_autofree uint32_t *got = NULL;
    uint64_t n, offset;
    int gw, gh;
    PVDCTest t;

    pvdc_test_start(&t, "vram-size=16M");
    primary = pvdc_plane_of(&t, 0, PRIMARY);
    pvdc_write_mode_sized(&t, 0, w, h, MODE_HTOTAL, 4, MODE_HTOTAL * 4);
    pvdc_wr_plane(&t, primary, PVDC_PS_HEAD, 0);
    pvdc_wr_plane(&t, primary, PVDC_PS_ZPOS, 0);
    pvdc_wr_plane(&t, primary, PVDC_PS_CTRL, PVDC_PS_CTRL_ENABLE);

    for (int fits = 0; fits < 2; fits++) {
        g_autofree uint8_t *row0 = NULL, *row1 = NULL;

        offset = fits ? t.vram_size - 2 * pitch
                      : t.vram_size - pitch - w * 4;
        row0 = pvdc_fill_vram(&t, offset, w * 4, 7 + fits);
        row1 = pvdc_fill_vram(&t, offset + pitch, w * 4, 9 + fits);
        pvdc_write_fb(&t, primary, PVDC_FMT_XRGB8888, offset, pitch, w, h);
        g_assert_cmphex(pvdc_commit(&t, 0), ==, PVDC_RESULT_APPLIED);
        n = pvdc_statistic(t.qts, "x-head0-compositions");
        got = pvdc_screendump(t.qts, 0, &gw, &gh);
        g_assert_cmpint(gw, ==, w);
        g_assert_cmpint(gh, ==, h);
        for (int x = 0; x < w; x++) {
            g_assert_cmphex(got[x], ==, ldl_le_p(row0 + 4 * x) & 0xffffff);
            g_assert_cmphex(got[w + x], ==,
                            ldl_le_p(row1 + 4 * x) & 0xffffff);
        }
        g_free(got);
        got = NULL;
        /* Composed when the surface would leave VRAM, else direct. */
        g_assert_cmpuint(pvdc_statistic(t.qts, "x-head0-compositions") - n,
                         ==, fits ? 0 : 1);
    }
    pvdc_test_stop(&t);
}

/* ------------------------------------------------------------------------ */
/* Connectors: HS_CONNECTOR is an index the guest writes                    */
/* ------------------------------------------------------------------------ */

static const uint32_t hostile_connectors[] = {
    4, 5, 8, 0xff, 0x100, 0x7fffffff, 0x80000000, 0xfffffffe, 0xffffffff,
};

/* Every console composed, every connector register and EDID read. */
static void compose_every_connector(PVDCTest *t)
{
    for (unsigned int c = 0; c < t->heads; c++) {
        pvdc_compose_again(t, c);
        (void)pvdc_head_ctl(t, c, PVDC_HEAD_PREFERRED);
        (void)pvdc_rd(t, PVDC_EDID(c) + PVDC_EDID_SIZE - 4);
    }
}

/*
 * No two enabled heads drive one connector, and each drives one that is.
 * Returns how many drive another head's.
 */
static unsigned int assert_routes_valid(PVDCTest *t)
{
    uint32_t driven = 0;
    unsigned int routed = 0;

    for (unsigned int h = 0; h < t->heads; h++) {
        uint32_t c = pvdc_rd(t, PVDC_HEAD_ACTIVE(h) + PVDC_HS_CONNECTOR);

        if (!(pvdc_rd(t, PVDC_HEAD_ACTIVE(h) + PVDC_HS_CTRL) &
              PVDC_HS_CTRL_ENABLE)) {
            continue;
        }
        g_assert_cmpuint(c, <, t->heads);
        g_assert_false(driven & BIT(c));
        driven |= BIT(c);
        routed += c != h;
    }
    return routed;
}

/*
 * Connectors past the last, near 2^32 or driven already are refused on a
 * head being enabled, and taken as written on a disabled one; random
 * routes never leave two heads on a connector, nor a console without a
 * picture to show.
 */
static void test_connector_values_are_refused(void)
{
    g_autoptr(GRand) rng = g_rand_new_with_seed(0x15c0);
    unsigned int routed = 0;
    PVDCSnapshot before;
    PVDCTest t;

    start_good(&t, "heads=4", &before);
    for (unsigned int i = 0; i < ARRAY_SIZE(hostile_connectors); i++) {
        unsigned int h = 1 + i % 3;

        pvdc_write_mode(&t, h, CLOCK_1MS);
        pvdc_wr_head(&t, h, PVDC_HS_CONNECTOR, hostile_connectors[i]);
        g_assert_cmphex(pvdc_commit(&t, h), ==,
                        pvdc_head_result(PVDC_ERR_CONNECTOR));
        pvdc_assert_active_is(&t, &before);
        /* off, the value is only stored */
        pvdc_wr_head(&t, h, PVDC_HS_CTRL, 0);
        g_assert_cmphex(pvdc_commit(&t, h), ==, PVDC_RESULT_APPLIED);
        g_assert_cmphex(pvdc_rd(&t, PVDC_HEAD_ACTIVE(h) + PVDC_HS_CONNECTOR),
                        ==, hostile_connectors[i]);
        pvdc_snapshot_active(&t, &before);
        compose_every_connector(&t);
    }
    /* head 0 drives connector 0 */
    pvdc_write_mode(&t, 2, CLOCK_1MS);
    pvdc_wr_head(&t, 2, PVDC_HS_CONNECTOR, 0);
    g_assert_cmphex(pvdc_commit(&t, 2), ==,
                    pvdc_head_result(PVDC_ERR_CONNECTOR));
    pvdc_wr_head(&t, 2, PVDC_HS_CTRL, 0);
    g_assert_cmphex(pvdc_commit(&t, 2), ==, PVDC_RESULT_APPLIED);
    pvdc_snapshot_active(&t, &before);
    pvdc_assert_still_works(&t, &before);

    /* Heads 1 to 3 at random; head 0 keeps connector 0. */
    for (unsigned int i = 0; i < 400; i++) {
        unsigned int h = g_rand_int_range(rng, 1, 4);
        uint32_t c = g_rand_boolean(rng) ?
                     g_rand_int_range(rng, 0, t.heads + 1) :
                     hostile_connectors[g_rand_int_range(
                         rng, 0, ARRAY_SIZE(hostile_connectors))];

        if (g_rand_int_range(rng, 0, 3)) {
            pvdc_write_mode(&t, h, g_rand_boolean(rng) ? CLOCK_1MS : CLOCK_2MS);
        } else {
            pvdc_wr_head(&t, h, PVDC_HS_CTRL, 0);
        }
        pvdc_wr_head(&t, h, PVDC_HS_CONNECTOR, c);
        pvdc_wr(&t, PVDC_REG_MULTI_DOORBELL, g_rand_int_range(rng, 1, 8) << 1 &
                ~pvdc_rd(&t, PVDC_REG_MULTI_DOORBELL));
        pvdc_step_to(&t, t.now + g_rand_int_range(rng, 0, 3 * PERIOD_1MS));
        routed += assert_routes_valid(&t);
        if (i % 16 == 0) {
            compose_every_connector(&t);
        }
    }
    /* the random routes were taken, not only refused */
    g_test_message("%u steps with heads on other heads' connectors",
                   routed);
    g_assert_cmpuint(routed, >, 20);
    pvdc_step_to(&t, t.now + 10 * PERIOD_1MS);
    compose_every_connector(&t);
    for (unsigned int h = 1; h < t.heads; h++) {
        pvdc_wr_head(&t, h, PVDC_HS_CTRL, 0);
    }
    pvdc_wr(&t, PVDC_REG_MULTI_DOORBELL, 0xe);
    pvdc_step_to(&t, t.now + 10 * PERIOD_1MS);
    g_assert_cmphex(pvdc_rd(&t, PVDC_REG_MULTI_DOORBELL), ==, 0);
    pvdc_snapshot_active(&t, &before);
    pvdc_assert_still_works(&t, &before);
    pvdc_test_stop(&t);
}

/*
 * Values that wrap 32-bit arithmetic, zero sizes and divisors, and
 * all-ones registers, written one at a time into a working shadow state:
 * each is refused with its error code and the device keeps working.
 */
static void test_hostile_values_are_refused(void)
{
    static const PlaneValue plane_cases[] = {
        /* 32-bit wrap of offset + pitch * (height - 1) */
        { PVDC_PS_FB_OFFSET, 0xffffffc0, PVDC_ERR_FB_BOUNDS },
        /* and of pitch * height: past PVDC_FB_SPAN_MAX first */
        { PVDC_PS_FB_PITCH, 0x40000000, PVDC_ERR_PITCH },
        { PVDC_PS_FB_PITCH, 0xffffffc0, PVDC_ERR_PITCH },
        /* 32-bit wrap of src_x + src_w */
        { PVDC_PS_SRC_X, 0xffff0000, PVDC_ERR_SRC_RECT },
        { PVDC_PS_SRC_W, 0xffffffff, PVDC_ERR_SRC_RECT },
        { PVDC_PS_FB_SIZE, 0xffffffff, PVDC_ERR_FB_SIZE },
        { PVDC_PS_DST_SIZE, 0xffffffff, PVDC_ERR_DST_RECT },
        { PVDC_PS_DST_SIZE, 0, PVDC_ERR_DST_RECT },
        { PVDC_PS_SRC_H, 0, PVDC_ERR_SRC_RECT },
        { PVDC_PS_ZPOS, 0xffffffff, PVDC_ERR_ZPOS },
        { PVDC_PS_FORMAT, 0, PVDC_ERR_FORMAT },
        { PVDC_PS_CTRL, 0xffffffff, PVDC_ERR_PLANE_CTRL },
    };
    static const struct {
        uint32_t reg, val;
    } mode_cases[] = {
        { PVDC_HS_PIXEL_CLOCK, 0 },
        { PVDC_HS_PIXEL_CLOCK, PVDC_MAX_PIXEL_CLOCK_KHZ + 1 },
        { PVDC_HS_HTIMING, 0 },
        { PVDC_HS_HTIMING, 0xffffffff },
        { PVDC_HS_VTIMING, PVDC_XY(MODE_H, MODE_H - 1) },
        { PVDC_HS_VSYNC, PVDC_XY(MODE_VTOTAL, MODE_H) },
    };
    unsigned int primary;
    PVDCSnapshot before;
    PVDCTest t;
    int i;

    /* No PIT: the slowest mode's first vblank is 49.7 days away. */
    pvdc_test_start_with(&t, NULL, "-machine pit=off");
    primary = pvdc_plane_of(&t, 0, PRIMARY);
    pvdc_enable_head(&t, 0, CLOCK_1MS);
    pvdc_snapshot_active(&t, &before);

    refuse_plane_values(&t, 0, primary, plane_cases, ARRAY_SIZE(plane_cases),
                        &before);

    for (i = 0; i < ARRAY_SIZE(mode_cases); i++) {
        pvdc_write_mode(&t, 1, CLOCK_1MS);
        pvdc_wr(&t, PVDC_HEAD_SHADOW(1) + mode_cases[i].reg, mode_cases[i].val);
        pvdc_doorbell(&t, 1);
        g_assert_cmphex(pvdc_wait_outcome(&t, 1, 0), ==,
                        pvdc_head_result(PVDC_ERR_MODE));
        pvdc_assert_active_is(&t, &before);
        g_assert_cmpuint(pvdc_head_ctl(&t, 1, PVDC_HEAD_FRAME_PERIOD), ==, 0);
    }

    /* The slowest mode there is still has a frame period and vblanks. */
    pvdc_write_mode(&t, 1, CLOCK_1MS);
    pvdc_wr(&t, PVDC_HEAD_SHADOW(1) + PVDC_HS_HTIMING, PVDC_XY(MODE_W, 0xffff));
    pvdc_wr(&t, PVDC_HEAD_SHADOW(1) + PVDC_HS_VTIMING, PVDC_XY(MODE_H, 0xffff));
    pvdc_wr(&t, PVDC_HEAD_SHADOW(1) + PVDC_HS_PIXEL_CLOCK, 1);
    pvdc_commit_enable(&t, 1);
    g_assert_cmphex(pvdc_head_ctl(&t, 1, PVDC_HEAD_FRAME_PERIOD), ==,
                    UINT32_MAX);

    /* Garbage everywhere in BAR0: still the same device. */
    for (uint32_t addr = 0; addr < PVDC_MMIO_SIZE; addr += 4) {
        if (addr == PVDC_REG_MULTI_DOORBELL ||
            (addr >= PVDC_HEAD_CONTROL_BASE &&
             addr < PVDC_HEAD_SHADOW_BASE &&
             (addr % PVDC_HEAD_STRIDE) == PVDC_HEAD_DOORBELL)) {
            continue;
        }
        if (addr % 64 == 0 || addr >= PVDC_EDID_BASE) {
            pvdc_wr(&t, addr, 0xffffffff);
        }
    }
    g_assert_cmphex(pvdc_rd(&t, PVDC_REG_ID), ==, PVDC_ID);
    g_assert_cmpuint(pvdc_rd(&t, PVDC_REG_NUM_HEADS), ==, t.heads);
    pvdc_test_stop(&t);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);

    qtest_add_func("/pvdc/hostile/fb-outside-vram-is-refused",
                   test_fb_outside_vram_is_refused);
    qtest_add_func("/pvdc/hostile/fb-at-the-end-of-vram-shows",
                   test_fb_at_the_end_of_vram_shows);
    qtest_add_func("/pvdc/hostile/layout-arithmetic-does-not-overflow",
                   test_layout_arithmetic_does_not_overflow);
    qtest_add_func("/pvdc/hostile/mode-arithmetic-does-not-overflow",
                   test_mode_arithmetic_does_not_overflow);
    qtest_add_func("/pvdc/hostile/zero-divisors-are-refused",
                   test_zero_divisors_are_refused);
    qtest_add_func("/pvdc/hostile/chroma-layout-is-refused",
                   test_chroma_layout_is_refused);
    qtest_add_func("/pvdc/hostile/writeback-targets-are-refused",
                   test_writeback_targets_are_refused);
    qtest_add_func("/pvdc/hostile/color-tables-are-refused",
                   test_color_tables_are_refused);
    qtest_add_func("/pvdc/hostile/tiny-sources-fill-the-largest-destination",
                   test_tiny_sources_fill_the_largest_destination);
    qtest_add_func("/pvdc/hostile/disabled-head-keeps-no-timer",
                   test_disabled_head_keeps_no_timer);
    qtest_add_func("/pvdc/hostile/huge-and-negative-rectangles-are-refused",
                   test_huge_and_negative_rectangles_are_refused);
    qtest_add_func("/pvdc/hostile/offscreen-rectangles-are-clipped",
                   test_offscreen_rectangles_are_clipped);
    qtest_add_func("/pvdc/hostile/cursor-size-overflow-is-refused",
                   test_cursor_size_overflow_is_refused);
    qtest_add_func("/pvdc/hostile/direct-scanout-stays-inside-vram",
                   test_direct_scanout_stays_inside_vram);
    qtest_add_func("/pvdc/hostile/connector-values-are-refused",
                   test_connector_values_are_refused);
    qtest_add_func("/pvdc/hostile/values-are-refused-device-stays-responsive",
                   test_hostile_values_are_refused);

    return g_test_run();
}
