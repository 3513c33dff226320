/*
 * QTest cases for pvdc's colour pipeline: DEGAMMA_LUT, CTM and GAMMA_LUT
 * of a head, composed through the registers and compared pixel by pixel
 * with the reference model (tests/qtest/pvdc-color-ref.h, through the
 * compose qtest library's reference composer); the tables copied at the
 * doorbell; direct scan-out turned off by a pipeline that changes pixels.
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

/* Identity LUT of @size entries: entry i = i * 0xffff / (size - 1). */
static void lut_identity(uint16_t *lut, uint32_t size)
{
    for (uint32_t i = 0; i < size; i++) {
        for (int ch = 0; ch < 3; ch++) {
            lut[4 * i + ch] = (uint64_t)i * 0xffff / (size - 1);
        }
        lut[4 * i + 3] = 0;
    }
}

/* A rising LUT of @size entries with noise, different per channel. */
static void lut_curve(uint16_t *lut, uint32_t size, uint32_t seed)
{
    for (uint32_t i = 0; i < size; i++) {
        for (int ch = 0; ch < 3; ch++) {
            double x = (double)i / (size - 1);
            int v = 65535 * x * x * (1 + ch) / 3 + 65535 * x * (2 - ch) / 3 +
                    (int)(pvdc_noise(seed, i, ch) % 512) - 256;

            lut[4 * i + ch] = MIN(MAX(v, 0), 0xffff);
        }
        /* the reserved field is ignored */
        lut[4 * i + 3] = pvdc_noise(seed, i, 3);
    }
}

/* S31.32 sign-magnitude of @v. */
static uint64_t ctm_value(double v)
{
    uint64_t mag = (uint64_t)((v < 0 ? -v : v) * 4294967296.0 + 0.5);

    return (v < 0 ? 1ull << 63 : 0) | mag;
}

static void ctm_identity(uint64_t *ctm)
{
    for (unsigned int i = 0; i < 9; i++) {
        ctm[i] = i % 4 ? 0 : ctm_value(1);
    }
}

/* Channels mixed, one negative coefficient and one beyond the clamp. */
static void ctm_mix(uint64_t *ctm)
{
    static const double m[9] = {
        0.7, 0.2, 0.1,
        -0.25, 1.1, 0.3,
        0.05, 0.15, 0.85,
    };

    for (unsigned int i = 0; i < 9; i++) {
        ctm[i] = ctm_value(m[i]);
    }
    /* 2^40 in S31.32: clamped to 2^13 - 2^-32 */
    ctm[8] = 1ull << 62 | 0x1234;
}

typedef struct ColorCase {
    const char *name;
    uint32_t stages;
    uint32_t degamma_size, gamma_size;
} ColorCase;

static const ColorCase color_cases[] = {
    { "gamma-17", PVDC_HS_CTRL_GAMMA, 0, 17 },
    { "degamma-256", PVDC_HS_CTRL_DEGAMMA, 256, 0 },
    { "ctm", PVDC_HS_CTRL_CTM, 0, 0 },
    { "degamma-2-ctm-gamma-4096",
      PVDC_HS_CTRL_DEGAMMA | PVDC_HS_CTRL_CTM | PVDC_HS_CTRL_GAMMA, 2,
      PVDC_LUT_MAX_SIZE },
    { "degamma-33-gamma-1024", PVDC_HS_CTRL_DEGAMMA | PVDC_HS_CTRL_GAMMA,
      33, 1024 },
};

static void color_build(PVDCColor *c, const ColorCase *cc)
{
    memset(c, 0, sizeof(*c));
    c->stages = cc->stages;
    c->degamma_size = cc->degamma_size ? cc->degamma_size : 2;
    c->gamma_size = cc->gamma_size ? cc->gamma_size : 2;
    lut_curve(c->degamma, c->degamma_size, 1);
    lut_curve(c->gamma, c->gamma_size, 2);
    ctm_mix(c->ctm);
}

/*
 * A pipeline composed through the registers, pixel by pixel against the
 * reference model (tests/qtest/pvdc-color-ref.h): in the CRC and on the
 * console.
 */
static void test_color_matches_reference(const void *opaque)
{
    g_autofree PVDCColor *c = g_new(PVDCColor, 1);
    PVDCScene scene = {};
    PVDCCompose t;

    pvdc_compose_start(&t, NULL, true);
    color_build(c, opaque);
    pvdc_build_two_planes(&t, &scene);
    scene.color = c;
    pvdc_check_scene(&t, &scene);
    pvdc_assert_screen_is(&t, 0, &scene);
    pvdc_compose_stop(&t);
}

/* Identity stages, at the smallest and the largest LUT, change nothing. */
static void test_color_identity_is_no_pipeline(void)
{
    g_autofree PVDCColor *c = g_new0(PVDCColor, 1);
    PVDCScene scene = {};
    uint32_t crc_without, crc_with;
    PVDCCompose t;

    pvdc_compose_start(&t, NULL, true);
    pvdc_build_two_planes(&t, &scene);
    pvdc_commit_scene(&t, 0, &scene);
    crc_without = pvdc_next_frame_crc(&t, 0);

    c->stages = PVDC_HS_CTRL_DEGAMMA | PVDC_HS_CTRL_CTM | PVDC_HS_CTRL_GAMMA;
    c->degamma_size = PVDC_LUT_MIN_SIZE;
    c->gamma_size = PVDC_LUT_MAX_SIZE;
    lut_identity(c->degamma, c->degamma_size);
    lut_identity(c->gamma, c->gamma_size);
    ctm_identity(c->ctm);
    scene.color = c;
    pvdc_commit_scene(&t, 0, &scene);
    crc_with = pvdc_next_frame_crc(&t, 0);
    g_assert_cmphex(crc_with, ==, crc_without);
    scene.color = NULL;
    pvdc_assert_screen_is(&t, 0, &scene);
    pvdc_compose_stop(&t);
}

/* A 2-entry GAMMA_LUT from white to black inverts every pixel. */
static void test_color_known_lut(void)
{
    g_autofree PVDCColor *c = g_new0(PVDCColor, 1);
    g_autofree uint32_t *want = g_new(uint32_t, MODE_W * MODE_H);
    g_autofree uint32_t *got = NULL;
    PVDCScene scene = {};
    PVDCCompose t;

    pvdc_compose_start(&t, NULL, true);
    scene.background = 0x405060;
    pvdc_scene_add(&scene, pvdc_scene_plane(&t, OVERLAY(0), PVDC_FMT_XRGB8888,
                                            1, 20, 16, 30, 20, 1));
    pvdc_reference(&t, &scene, want);
    for (int i = 0; i < MODE_W * MODE_H; i++) {
        want[i] ^= 0xffffff;
    }
    c->stages = PVDC_HS_CTRL_GAMMA;
    c->gamma_size = 2;
    pvdc_lut_invert(c->gamma);
    scene.color = c;
    pvdc_commit_scene(&t, 0, &scene);
    g_assert_cmphex(pvdc_next_frame_crc(&t, 0), ==,
                    pvdc_frame_crc(want, MODE_W * MODE_H));
    got = pvdc_screendump_mode(t.p.qts, 0);
    pvdc_assert_pictures_equal(got, want, 0);
    /* the background, 0x405060, where no plane covers it */
    g_assert_cmphex(got[(MODE_H - 1) * MODE_W + MODE_W - 1], ==, 0xbfaf9f);
    pvdc_compose_stop(&t);
}

/* The CRC of @scene as the reference draws it. */
static uint32_t reference_crc(PVDCCompose *t, const PVDCScene *scene)
{
    g_autofree uint32_t *want = g_new(uint32_t, MODE_W * MODE_H);

    pvdc_reference(t, scene, want);
    return pvdc_frame_crc(want, MODE_W * MODE_H);
}

/*
 * The tables are the ones in VRAM when the doorbell rang (and when
 * DOORBELL_AMEND took the commit again), not at the latch point nor after
 * it; a colour change on an enabled head needs no modeset.
 */
static void test_color_copied_at_the_doorbell(void)
{
    g_autofree PVDCColor *c = g_new0(PVDCColor, 1);
    g_autofree uint16_t *black = g_new0(uint16_t, 4 * 2);
    PVDCScene scene = {};
    uint32_t count, crc;
    PVDCCompose t;

    pvdc_compose_start(&t, NULL, true);
    pvdc_build_two_planes(&t, &scene);
    pvdc_commit_scene(&t, 0, &scene);
    count = pvdc_head_ctl(&t.p, 0, PVDC_HEAD_VBLANK_COUNT);

    /* the inverting LUT at the doorbell, black before the latch point */
    c->stages = PVDC_HS_CTRL_GAMMA;
    c->gamma_size = 2;
    pvdc_lut_invert(c->gamma);
    pvdc_write_color(&t, 0, c);
    pvdc_wr(&t.p, PVDC_HEAD_SHADOW(0) + PVDC_HS_CTRL,
            PVDC_HS_CTRL_ENABLE | PVDC_HS_CTRL_GAMMA);
    pvdc_doorbell(&t.p, 0);
    /* an amend with the same tables takes over what the doorbell made */
    pvdc_wr(&t.p, PVDC_HEAD_CONTROL(0) + PVDC_HEAD_DOORBELL,
            PVDC_DOORBELL_AMEND);
    pvdc_write_lut(&t, COLOR_GAMMA, black, 2);
    g_assert_cmphex(pvdc_wait_outcome(&t.p, 0, 2 * PERIOD_1MS), ==,
                    PVDC_RESULT_APPLIED);
    /* not a modeset: the timeline went on */
    g_assert_cmpuint(pvdc_head_ctl(&t.p, 0, PVDC_HEAD_VBLANK_COUNT), ==,
                     count + 1);
    scene.color = c;
    pvdc_assert_screen_is(&t, 0, &scene);
    crc = pvdc_next_frame_crc(&t, 0);
    /* nor after it */
    pvdc_write_lut(&t, COLOR_GAMMA, black, 2);
    g_assert_cmphex(pvdc_next_frame_crc(&t, 0), ==, crc);
    pvdc_assert_screen_is(&t, 0, &scene);

    /* an amend copies again: black now, the curve after it */
    lut_curve(c->gamma, 2, 5);
    pvdc_write_lut(&t, COLOR_GAMMA, black, 2);
    pvdc_doorbell(&t.p, 0);
    pvdc_write_lut(&t, COLOR_GAMMA, c->gamma, 2);
    pvdc_wr(&t.p, PVDC_HEAD_CONTROL(0) + PVDC_HEAD_DOORBELL,
            PVDC_DOORBELL_AMEND);
    pvdc_write_lut(&t, COLOR_GAMMA, black, 2);
    g_assert_cmphex(pvdc_wait_outcome(&t.p, 0, 2 * PERIOD_1MS), ==,
                    PVDC_RESULT_APPLIED);
    pvdc_assert_screen_is(&t, 0, &scene);

    /*
     * Flips keep the pipeline (the same tables again), also across a
     * refused commit and an amend
     */
    pvdc_write_lut(&t, COLOR_GAMMA, c->gamma, 2);
    g_assert_cmphex(pvdc_commit(&t.p, 0), ==, PVDC_RESULT_APPLIED);
    pvdc_assert_screen_is(&t, 0, &scene);
    pvdc_wr(&t.p, PVDC_HEAD_SHADOW(0) + PVDC_HS_BANDWIDTH, 1);
    g_assert_cmphex(pvdc_commit(&t.p, 0), ==,
                    pvdc_head_result(PVDC_ERR_BANDWIDTH_CHANGE));
    pvdc_assert_screen_is(&t, 0, &scene);
    pvdc_doorbell(&t.p, 0);
    pvdc_wr(&t.p, PVDC_HEAD_CONTROL(0) + PVDC_HEAD_DOORBELL,
            PVDC_DOORBELL_AMEND);
    g_assert_cmphex(pvdc_wait_outcome(&t.p, 0, 2 * PERIOD_1MS), ==,
                    pvdc_head_result(PVDC_ERR_BANDWIDTH_CHANGE));
    pvdc_wr(&t.p, PVDC_HEAD_SHADOW(0) + PVDC_HS_BANDWIDTH,
            pvdc_rd(&t.p, PVDC_HEAD_ACTIVE(0) + PVDC_HS_BANDWIDTH));
    pvdc_doorbell(&t.p, 0);
    pvdc_wr(&t.p, PVDC_HEAD_CONTROL(0) + PVDC_HEAD_DOORBELL,
            PVDC_DOORBELL_AMEND);
    g_assert_cmphex(pvdc_wait_outcome(&t.p, 0, 2 * PERIOD_1MS), ==,
                    PVDC_RESULT_APPLIED);
    pvdc_assert_screen_is(&t, 0, &scene);
    g_assert_cmphex(pvdc_next_frame_crc(&t, 0), ==, reference_crc(&t, &scene));

    /* and the pipeline goes when its bit does */
    pvdc_wr(&t.p, PVDC_HEAD_SHADOW(0) + PVDC_HS_CTRL, PVDC_HS_CTRL_ENABLE);
    g_assert_cmphex(pvdc_commit(&t.p, 0), ==, PVDC_RESULT_APPLIED);
    scene.color = NULL;
    pvdc_assert_screen_is(&t, 0, &scene);
    pvdc_compose_stop(&t);
}

/*
 * A head showing one framebuffer is displayed from VRAM until a pipeline
 * that changes pixels is turned on, and again once it is off; an identity
 * pipeline keeps it there.
 */
static void test_color_turns_direct_scanout_off_and_on(void)
{
    g_autofree PVDCColor *c = g_new0(PVDCColor, 1);
    PVDCScene scene = {};
    uint32_t pixel = 0x00fedcba;
    uint64_t n;
    PVDCCompose t;

    pvdc_compose_start(&t, NULL, false);
    pvdc_show_one_framebuffer(&t, &scene);
    g_assert_cmpuint(pvdc_compositions(&t, 0), ==, 0);

    c->stages = PVDC_HS_CTRL_GAMMA;
    c->gamma_size = PVDC_LUT_MAX_SIZE;
    lut_identity(c->gamma, c->gamma_size);
    scene.color = c;
    pvdc_commit_scene(&t, 0, &scene);
    pvdc_assert_screen_is(&t, 0, &scene);
    g_assert_cmpuint(pvdc_compositions(&t, 0), ==, 0);

    pvdc_lut_invert(c->gamma);
    c->gamma_size = 2;
    pvdc_commit_scene(&t, 0, &scene);
    pvdc_assert_screen_is(&t, 0, &scene);
    n = pvdc_compositions(&t, 0);
    g_assert_cmpuint(n, >, 0);
    pvdc_vram_write(&t, FB_BASE(0) + 17 * scene.planes[0].pitch + 3 * 4,
                    &pixel, 4);
    pvdc_assert_screen_is(&t, 0, &scene);
    g_assert_cmpuint(pvdc_compositions(&t, 0), >, n);

    scene.color = NULL;
    pvdc_commit_scene(&t, 0, &scene);
    pvdc_assert_screen_is(&t, 0, &scene);
    n = pvdc_compositions(&t, 0);
    pixel = 0x123456;
    pvdc_vram_write(&t, FB_BASE(0) + 18 * scene.planes[0].pitch + 3 * 4,
                    &pixel, 4);
    pvdc_assert_screen_is(&t, 0, &scene);
    g_assert_cmpuint(pvdc_compositions(&t, 0), ==, n);
    pvdc_compose_stop(&t);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);

    for (size_t i = 0; i < ARRAY_SIZE(color_cases); i++) {
        g_autofree char *path =
            g_strdup_printf("/pvdc/compose/color/%s", color_cases[i].name);

        qtest_add_data_func(path, &color_cases[i],
                            test_color_matches_reference);
    }
    qtest_add_func("/pvdc/compose/color/identity-is-no-pipeline",
                   test_color_identity_is_no_pipeline);
    qtest_add_func("/pvdc/compose/color/known-lut-inverts",
                   test_color_known_lut);
    qtest_add_func("/pvdc/compose/color/tables-copied-at-the-doorbell",
                   test_color_copied_at_the_doorbell);
    qtest_add_func("/pvdc/compose/color/direct-scanout-off-and-on",
                   test_color_turns_direct_scanout_off_and_on);

    return g_test_run();
}
