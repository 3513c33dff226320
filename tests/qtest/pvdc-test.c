/*
 * QTest cases for pvdc, the paravirtual display controller.
 *
 * Time only moves through the qtest clock (step_to(), step_next()): every
 * expectation about a vblank or a latch point is exact to the nanosecond.
 * The test modes are tiny (64x48) so that a frame lasts a round number of
 * milliseconds.
 *
 * Copyright (c) 2026 The pvdc authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "hw/pci/pci_regs.h"
#include "pvdc-qtest.h"

/* A frame of exactly 2 ms. */
#define CLOCK_2MS           (CLOCK_1MS / 2)

static uint64_t period_ns(uint32_t clock_khz)
{
    return (uint64_t)MODE_HTOTAL * MODE_VTOTAL * SCALE_MS / clock_khz;
}

/* The shadow state of a 64x48 mode on @head, enabled. */
static void write_mode(PVDCTest *t, unsigned int head, uint32_t clock_khz)
{
    uint64_t base = PVDC_HEAD_SHADOW(head);

    wr(t, base + PVDC_HS_HTIMING, PVDC_XY(MODE_W, MODE_HTOTAL));
    wr(t, base + PVDC_HS_HSYNC, PVDC_XY(MODE_W + 2, MODE_W + 6));
    wr(t, base + PVDC_HS_VTIMING, PVDC_XY(MODE_H, MODE_VTOTAL));
    wr(t, base + PVDC_HS_VSYNC, PVDC_XY(MODE_H + 1, MODE_H + 2));
    wr(t, base + PVDC_HS_PIXEL_CLOCK, clock_khz);
    wr(t, base + PVDC_HS_CTRL, PVDC_HS_CTRL_ENABLE);
}

/* The shadow state of an unscaled full-screen XRGB8888 plane. */
static void write_plane(PVDCTest *t, unsigned int plane, unsigned int head,
                        uint32_t offset, uint32_t zpos)
{
    uint64_t base = PVDC_PLANE_SHADOW(plane);

    wr(t, base + PVDC_PS_HEAD, head);
    wr(t, base + PVDC_PS_FORMAT, PVDC_FMT_XRGB8888);
    wr(t, base + PVDC_PS_FB_OFFSET, offset);
    wr(t, base + PVDC_PS_FB_PITCH, MODE_PITCH);
    wr(t, base + PVDC_PS_FB_SIZE, PVDC_XY(MODE_W, MODE_H));
    wr(t, base + PVDC_PS_SRC_X, 0);
    wr(t, base + PVDC_PS_SRC_Y, 0);
    wr(t, base + PVDC_PS_SRC_W, FP16(MODE_W));
    wr(t, base + PVDC_PS_SRC_H, FP16(MODE_H));
    wr(t, base + PVDC_PS_DST_POS, 0);
    wr(t, base + PVDC_PS_DST_SIZE, PVDC_XY(MODE_W, MODE_H));
    wr(t, base + PVDC_PS_ZPOS, zpos);
    wr(t, base + PVDC_PS_CTRL, PVDC_PS_CTRL_ENABLE);
}

/*
 * Enable @head with the test mode and its primary plane, from a disabled
 * head and no link-up delay, so it latches at once.  Returns the enable
 * time, which is vblank 0 of the new timeline.
 */
static int64_t enable_head(PVDCTest *t, unsigned int head, uint32_t clock_khz)
{
    int64_t t0 = now_ns(t);

    write_mode(t, head, clock_khz);
    write_plane(t, plane_of(t, head, PRIMARY), head, 0, 0);
    doorbell(t, head);
    g_assert_cmphex(wait_outcome(t, head, 0), ==, PVDC_RESULT_APPLIED);
    g_assert_cmpint(now_ns(t), ==, t0);
    return t0;
}

/* ------------------------------------------------------------------------ */
/* Identity, capabilities, properties, reset values                         */
/* ------------------------------------------------------------------------ */

static void test_pci_identity(void)
{
    PVDCTest t;

    pvdc_test_start(&t, NULL);
    g_assert_cmphex(qpci_config_readw(t.dev, PCI_VENDOR_ID), ==,
                    PVDC_PCI_VENDOR_ID);
    g_assert_cmphex(qpci_config_readw(t.dev, PCI_DEVICE_ID), ==,
                    PVDC_PCI_DEVICE_ID);
    g_assert_cmphex(qpci_config_readb(t.dev, PCI_REVISION_ID), ==,
                    PVDC_PCI_REVISION);
    g_assert_cmphex(rd(&t, PVDC_REG_ID), ==, PVDC_ID);
    g_assert_cmphex(rd(&t, PVDC_REG_VERSION), ==,
                    (PVDC_VERSION_MAJOR << 16) | PVDC_VERSION_MINOR);
    g_assert_cmpuint(qpci_config_readb(t.dev, PCI_INTERRUPT_PIN), ==, 1);
    g_assert_cmpuint(qpci_find_capability(t.dev, PCI_CAP_ID_MSI, 0), !=, 0);
    g_assert_cmphex(rd(&t, PVDC_REG_FEATURES) & PVDC_FEATURE_MSI, ==,
                    PVDC_FEATURE_MSI);
    g_assert_cmphex(rd(&t, PVDC_REG_FEATURES) &
                    PVDC_FEATURE_MULTI_HEAD_COMMIT, !=, 0);
    pvdc_test_stop(&t);
}

static void test_capabilities_follow_properties(void)
{
    static const struct {
        const char *props;
        uint32_t heads, overlays, scalers, max_w, max_h, bandwidth;
        uint64_t vram;
    } cases[] = {
        { NULL, 2, 3, 2, 4096, 4096, 2 * 24300, 64 * MiB },
        { "heads=1,overlays=0,scalers=0,vram-size=16M", 1, 0, 0, 4096, 4096,
          24300, 16 * MiB },
        { "heads=8,overlays=8,scalers=4,vram-size=256M,max-width=16384,"
          "max-height=2000,bandwidth-kib=1000", 8, 8, 4, 16384, 2000, 1000,
          256 * MiB },
        { "heads=3,overlays=1,scalers=16,vram-size=128M", 3, 1, 16, 4096, 4096,
          3 * 24300, 128 * MiB },
    };

    for (int i = 0; i < ARRAY_SIZE(cases); i++) {
        PVDCTest t;

        pvdc_test_start(&t, cases[i].props);
        g_assert_cmpuint(rd(&t, PVDC_REG_NUM_HEADS), ==, cases[i].heads);
        g_assert_cmpuint(rd(&t, PVDC_REG_NUM_OVERLAYS), ==, cases[i].overlays);
        g_assert_cmpuint(rd(&t, PVDC_REG_NUM_PLANES), ==,
                         cases[i].heads * (cases[i].overlays + 2));
        g_assert_cmpuint(rd(&t, PVDC_REG_NUM_SCALERS), ==, cases[i].scalers);
        g_assert_cmpuint(t.vram_size, ==, cases[i].vram);
        g_assert_cmphex(rd(&t, PVDC_REG_MAX_SIZE), ==,
                        PVDC_XY(cases[i].max_w, cases[i].max_h));
        g_assert_cmpuint(rd(&t, PVDC_REG_BANDWIDTH_TOTAL), ==,
                         cases[i].bandwidth);
        pvdc_test_stop(&t);
    }
}

static void test_fixed_capabilities_match_the_design(void)
{
    static const uint32_t rgb[] = {
        PVDC_FMT_XRGB8888, PVDC_FMT_ARGB8888, PVDC_FMT_XBGR8888,
        PVDC_FMT_ABGR8888, PVDC_FMT_RGB565, PVDC_FMT_XRGB2101010,
    };
    uint32_t primary, overlay, cursor, table[PVDC_MAX_FORMATS];
    PVDCTest t;
    int i, j;

    pvdc_test_start(&t, NULL);
    g_assert_cmphex(rd(&t, PVDC_REG_CURSOR_MAX), ==, PVDC_XY(256, 256));
    g_assert_cmphex(rd(&t, PVDC_REG_SCALE_LIMITS), ==,
                    4 << PVDC_SCALE_MAX_DOWNSCALE_SHIFT |
                    8 << PVDC_SCALE_MAX_UPSCALE_SHIFT);
    g_assert_cmpuint(rd(&t, PVDC_REG_PITCH_ALIGN), ==, 64);
    g_assert_cmpuint(rd(&t, PVDC_REG_OFFSET_ALIGN), ==, 64);

    for (i = 0; i < PVDC_MAX_FORMATS; i++) {
        table[i] = rd(&t, PVDC_REG_FORMAT_TABLE(i));
    }
    primary = rd(&t, PVDC_REG_FORMATS_PRIMARY);
    overlay = rd(&t, PVDC_REG_FORMATS_OVERLAY);
    cursor = rd(&t, PVDC_REG_FORMATS_CURSOR);
    for (i = 0; i < PVDC_MAX_FORMATS; i++) {
        bool is_rgb = false;

        for (j = 0; j < ARRAY_SIZE(rgb); j++) {
            is_rgb |= table[i] == rgb[j];
        }
        if (!table[i]) {
            g_assert_false((primary | overlay | cursor) & BIT(i));
            continue;
        }
        g_assert(is_rgb || table[i] == PVDC_FMT_YUYV);
        g_assert_cmpint(!!(primary & BIT(i)), ==, is_rgb);
        g_assert_true(overlay & BIT(i));
        g_assert_cmpint(!!(cursor & BIT(i)), ==,
                        table[i] == PVDC_FMT_ARGB8888);
    }
    g_assert_cmpuint(ctpop32(overlay), ==, ARRAY_SIZE(rgb) + 1);
    pvdc_test_stop(&t);
}

typedef struct InvalidProp {
    const char *prop;
    const char *val;
} InvalidProp;

static const InvalidProp invalid_props[] = {
    { "heads", "0" },
    { "heads", "9" },
    { "overlays", "9" },
    { "scalers", "17" },
    { "vram-size", "8M" },
    { "vram-size", "48M" },
    { "vram-size", "2G" },
    { "max-width", "0" },
    { "max-height", "16385" },
    { "xres", "5000" },
    { "x-link-up-delay-ms", "60001" },
};

/* Runs in a subprocess: QEMU is expected to exit before qtest connects. */
static void test_invalid_property_subprocess(const void *opaque)
{
    const InvalidProp *c = opaque;
    g_autofree char *props = g_strdup_printf("%s=%s", c->prop, c->val);

    qtest_quit(pvdc_test_spawn(props, NULL));
}

static void test_invalid_properties_fail_realize(void)
{
    for (int i = 0; i < ARRAY_SIZE(invalid_props); i++) {
        g_autofree char *path =
            g_strdup_printf("/%s/pvdc/properties/invalid/subprocess/%d",
                            qtest_get_arch(), i);
        g_autofree char *error = g_strdup_printf("*: pvdc: *%s*",
                                                 invalid_props[i].prop);

        g_test_trap_subprocess(path, 60 * G_USEC_PER_SEC, 0);
        g_test_trap_assert_failed();
        g_test_trap_assert_stderr(error);
    }
}

static void assert_reset_state(PVDCTest *t)
{
    uint32_t bandwidth = rd(t, PVDC_REG_BANDWIDTH_TOTAL) / t->heads;
    unsigned int h, p, r;

    for (h = 0; h < t->heads; h++) {
        for (r = 0; r < PVDC_HEAD_STATE_REGS; r++) {
            uint32_t expect = r * 4 == PVDC_HS_BANDWIDTH ? bandwidth : 0;

            g_assert_cmphex(rd(t, PVDC_HEAD_SHADOW(h) + r * 4), ==, expect);
            g_assert_cmphex(rd(t, PVDC_HEAD_ACTIVE(h) + r * 4), ==, expect);
        }
        g_assert_cmpuint(head_ctl(t, h, PVDC_HEAD_DOORBELL), ==, 0);
        g_assert_cmpuint(head_ctl(t, h, PVDC_HEAD_ARMED_SEQ), ==, 0);
        g_assert_cmpuint(head_ctl(t, h, PVDC_HEAD_DONE_SEQ), ==, 0);
        g_assert_cmpuint(head_ctl(t, h, PVDC_HEAD_RESULT), ==,
                         PVDC_RESULT_NONE);
        g_assert_cmpuint(head_ctl(t, h, PVDC_HEAD_VBLANK_COUNT), ==, 0);
        g_assert_cmpuint(head_ctl(t, h, PVDC_HEAD_FRAME_PERIOD), ==, 0);
        g_assert_cmpuint(head_ctl(t, h, PVDC_HEAD_STATUS), ==, 0);
        g_assert_cmpuint(head_ctl(t, h, PVDC_HEAD_CRC_CTRL), ==, 0);
    }
    for (p = 0; p < t->planes; p++) {
        uint32_t caps = rd(t, PVDC_REG_PLANE_CAPS(p));
        uint32_t home = p / (t->overlays + 2);
        uint32_t index = p % (t->overlays + 2);
        uint32_t type = index == 0 ? PVDC_PLANE_TYPE_PRIMARY :
                        index == t->overlays + 1 ? PVDC_PLANE_TYPE_CURSOR :
                        PVDC_PLANE_TYPE_OVERLAY;
        uint32_t heads = type == PVDC_PLANE_TYPE_OVERLAY ?
                         MAKE_64BIT_MASK(0, t->heads) : BIT(home);

        g_assert_cmphex(caps, ==, type |
                        heads << PVDC_PLANE_CAPS_HEADS_SHIFT |
                        home << PVDC_PLANE_CAPS_HOME_SHIFT);
        for (r = 0; r < PVDC_PLANE_STATE_REGS; r++) {
            uint32_t expect = r * 4 == PVDC_PS_HEAD ? home :
                              r * 4 == PVDC_PS_ALPHA ? 0xffff : 0;

            g_assert_cmphex(rd(t, PVDC_PLANE_SHADOW(p) + r * 4), ==, expect);
            g_assert_cmphex(rd(t, PVDC_PLANE_ACTIVE(p) + r * 4), ==, expect);
        }
    }
    g_assert_cmphex(rd(t, PVDC_REG_INT_STATUS), ==, 0);
    g_assert_cmphex(rd(t, PVDC_REG_INT_ENABLE), ==, 0);
    g_assert_cmphex(rd(t, PVDC_REG_MULTI_DOORBELL), ==, 0);
}

static void test_reset_values(void)
{
    static const char *const props[] = {
        NULL, "heads=1,overlays=0", "heads=3,overlays=1,bandwidth-kib=1000",
        "heads=8,overlays=8",
    };

    for (int i = 0; i < ARRAY_SIZE(props); i++) {
        PVDCTest t;

        pvdc_test_start(&t, props[i]);
        assert_reset_state(&t);
        pvdc_test_stop(&t);
    }
}

static void test_edid_and_connector(void)
{
    PVDCTest t;

    pvdc_test_start(&t, "xres=800,yres=600");
    for (unsigned int h = 0; h < t.heads; h++) {
        g_assert_cmphex(rd(&t, PVDC_EDID(h)), ==, 0xffffff00);
        g_assert_cmphex(rd(&t, PVDC_EDID(h) + 4), ==, 0x00ffffff);
        g_assert_cmphex(head_ctl(&t, h, PVDC_HEAD_CONNECTOR), ==,
                        PVDC_CONNECTOR_CONNECTED);
        g_assert_cmphex(head_ctl(&t, h, PVDC_HEAD_PREFERRED), ==,
                        PVDC_XY(800, 600));
        g_assert_cmphex(head_ctl(&t, h, PVDC_HEAD_SUGGESTED_POS), ==,
                        PVDC_XY(800 * h, 0));
    }
    pvdc_test_stop(&t);
}

static void test_vram_bar_is_memory(void)
{
    PVDCTest t;

    pvdc_test_start(&t, NULL);
    qpci_io_writel(t.dev, t.vram, 0x1000, 0xdeadbeef);
    g_assert_cmphex(qpci_io_readl(t.dev, t.vram, 0x1000), ==, 0xdeadbeef);
    pvdc_test_stop(&t);
}

/* ------------------------------------------------------------------------ */
/* Shadow, armed, active                                                    */
/* ------------------------------------------------------------------------ */

static void test_shadow_writes_without_doorbell_change_nothing(void)
{
    PVDCTest t;
    Snapshot before, shadow;
    int64_t t0;
    unsigned int i, r;

    pvdc_test_start(&t, NULL);
    t0 = enable_head(&t, 0, CLOCK_1MS);
    snapshot_active(&t, &before);

    for (i = 0; i < t.heads; i++) {
        for (r = 0; r < PVDC_HEAD_STATE_REGS; r++) {
            wr(&t, PVDC_HEAD_SHADOW(i) + r * 4, 0x5a5a0000 + i * 16 + r);
        }
    }
    for (i = 0; i < t.planes; i++) {
        for (r = 0; r < PVDC_PLANE_STATE_REGS; r++) {
            wr(&t, PVDC_PLANE_SHADOW(i) + r * 4, 0xa5a50000 + i * 16 + r);
        }
    }
    snapshot_shadow(&t, &shadow);
    g_assert_cmphex(shadow.plane[1][PVDC_PS_ZPOS / 4], ==,
                    0xa5a50000 + 16 + PVDC_PS_ZPOS / 4);

    step_to(&t, t0 + 50 * period_ns(CLOCK_1MS) + 1);
    assert_active_is(&t, &before);
    g_assert_cmpuint(head_ctl(&t, 0, PVDC_HEAD_VBLANK_COUNT), ==, 50);
    g_assert_cmpuint(head_ctl(&t, 0, PVDC_HEAD_DONE_SEQ), ==, 1);
    g_assert_cmpuint(head_ctl(&t, 1, PVDC_HEAD_DONE_SEQ), ==, 0);
    pvdc_test_stop(&t);
}

static void test_commit_applies_exactly_at_next_vblank(void)
{
    const uint64_t period = period_ns(CLOCK_1MS);
    unsigned int primary, overlay;
    Snapshot before, after;
    PVDCTest t;
    int64_t t0, arm;

    pvdc_test_start(&t, NULL);
    primary = plane_of(&t, 0, PRIMARY);
    overlay = plane_of(&t, 0, OVERLAY(0));
    t0 = enable_head(&t, 0, CLOCK_1MS);
    snapshot_active(&t, &before);

    /* Arm in the middle of frame 2: it latches at vblank 3. */
    arm = t0 + 2 * period + period / 3;
    step_to(&t, arm);
    wr(&t, PVDC_HEAD_SHADOW(0) + PVDC_HS_BACKGROUND, 0x00336699);
    wr(&t, PVDC_PLANE_SHADOW(primary) + PVDC_PS_FB_OFFSET, 64 * KiB);
    wr(&t, PVDC_PLANE_SHADOW(primary) + PVDC_PS_ALPHA, 0x8000);
    write_plane(&t, overlay, 0, 128 * KiB, 1);
    wr(&t, PVDC_PLANE_SHADOW(overlay) + PVDC_PS_DST_POS, PVDC_XY(-8, 4));
    doorbell(&t, 0);
    g_assert_cmpuint(head_ctl(&t, 0, PVDC_HEAD_DOORBELL), ==, 1);
    g_assert_cmpuint(head_ctl(&t, 0, PVDC_HEAD_ARMED_SEQ), ==, 2);

    after = before;
    after.head[0][PVDC_HS_BACKGROUND / 4] = 0x00336699;
    after.plane[primary][PVDC_PS_FB_OFFSET / 4] = 64 * KiB;
    after.plane[primary][PVDC_PS_ALPHA / 4] = 0x8000;
    for (unsigned int r = 0; r < PVDC_PLANE_STATE_REGS; r++) {
        after.plane[overlay][r] = rd(&t, PVDC_PLANE_SHADOW(overlay) + r * 4);
    }

    step_to(&t, t0 + 3 * period - 1);
    assert_active_is(&t, &before);
    g_assert_cmpuint(head_ctl(&t, 0, PVDC_HEAD_DOORBELL), ==, 1);
    g_assert_cmpuint(head_ctl(&t, 0, PVDC_HEAD_DONE_SEQ), ==, 1);

    step_to(&t, t0 + 3 * period);
    assert_active_is(&t, &after);
    g_assert_cmpuint(head_ctl(&t, 0, PVDC_HEAD_DOORBELL), ==, 0);
    g_assert_cmpuint(head_ctl(&t, 0, PVDC_HEAD_DONE_SEQ), ==, 2);
    g_assert_cmphex(head_ctl(&t, 0, PVDC_HEAD_RESULT), ==,
                    PVDC_RESULT_APPLIED);
    g_assert_cmpuint(head_ctl(&t, 0, PVDC_HEAD_VBLANK_COUNT), ==, 3);
    g_assert_cmphex(rd(&t, PVDC_REG_INT_STATUS), ==,
                    PVDC_INT(0, PVDC_INT_COMMIT_DONE));

    /* Armed exactly at a vblank, it waits for the next one. */
    wr(&t, PVDC_HEAD_SHADOW(0) + PVDC_HS_BACKGROUND, 0x00ffffff);
    doorbell(&t, 0);
    step_to(&t, t0 + 4 * period - 1);
    assert_active_is(&t, &after);
    step_to(&t, t0 + 4 * period);
    g_assert_cmphex(rd(&t, PVDC_HEAD_ACTIVE(0) + PVDC_HS_BACKGROUND), ==,
                    0x00ffffff);
    pvdc_test_stop(&t);
}

static void test_writes_to_active_windows_are_ignored(void)
{
    Snapshot before;
    PVDCTest t;

    pvdc_test_start(&t, NULL);
    enable_head(&t, 0, CLOCK_1MS);
    snapshot_active(&t, &before);
    for (unsigned int r = 0; r < PVDC_HEAD_STATE_REGS; r++) {
        wr(&t, PVDC_HEAD_ACTIVE(0) + r * 4, 0x12345678);
    }
    for (unsigned int r = 0; r < PVDC_PLANE_STATE_REGS; r++) {
        wr(&t, PVDC_PLANE_ACTIVE(0) + r * 4, 0x12345678);
    }
    wr(&t, PVDC_REG_ID, 0);
    wr(&t, PVDC_REG_PLANE_CAPS(0), 0);
    wr(&t, PVDC_HEAD_CONTROL(0) + PVDC_HEAD_ARMED_SEQ, 77);
    assert_active_is(&t, &before);
    g_assert_cmphex(rd(&t, PVDC_REG_ID), ==, PVDC_ID);
    g_assert_cmpuint(head_ctl(&t, 0, PVDC_HEAD_ARMED_SEQ), ==, 1);
    pvdc_test_stop(&t);
}

/* ------------------------------------------------------------------------ */
/* Validation rules: one test per rule                                      */
/* ------------------------------------------------------------------------ */

/*
 * Every rule test starts from head 0 enabled (64x48, 1 ms frames) with its
 * primary plane, on a device with two overlays per head, one scaler and
 * 20 KiB of bandwidth per head (a 64x48 XRGB8888 plane needs 12 KiB).
 */
#define RULE_PROPS  "heads=2,overlays=2,scalers=1,bandwidth-kib=40"
#define RULE_HEAD_BANDWIDTH 20

typedef struct RuleCase {
    const char *name;
    /* Breaks the rule in the shadow state; returns the head to commit. */
    unsigned int (*breaks)(PVDCTest *t);
    uint32_t code;
    /* The plane reported, PVDC_RESULT_PLANE_NONE for a head rule. */
    unsigned int (*plane)(PVDCTest *t);
} RuleCase;

static unsigned int no_plane(PVDCTest *t)
{
    return PVDC_RESULT_PLANE_NONE;
}

static unsigned int primary0(PVDCTest *t)
{
    return plane_of(t, 0, PRIMARY);
}

static unsigned int overlay0(PVDCTest *t)
{
    return plane_of(t, 0, OVERLAY(0));
}

static unsigned int cursor0(PVDCTest *t)
{
    return cursor_of(t, 0);
}

static unsigned int primary1(PVDCTest *t)
{
    return plane_of(t, 1, PRIMARY);
}

static unsigned int break_head_reserved(PVDCTest *t)
{
    wr(t, PVDC_HEAD_SHADOW(0) + PVDC_HS_CTRL, PVDC_HS_CTRL_ENABLE | BIT(1));
    return 0;
}

static unsigned int break_mode(PVDCTest *t)
{
    write_mode(t, 1, CLOCK_1MS);
    /* hsync starts inside the active area */
    wr(t, PVDC_HEAD_SHADOW(1) + PVDC_HS_HSYNC,
       PVDC_XY(MODE_W - 1, MODE_W + 6));
    return 1;
}

static unsigned int break_modeset_required(PVDCTest *t)
{
    wr(t, PVDC_HEAD_SHADOW(0) + PVDC_HS_PIXEL_CLOCK, CLOCK_2MS);
    return 0;
}

static unsigned int break_bandwidth_change(PVDCTest *t)
{
    wr(t, PVDC_HEAD_SHADOW(0) + PVDC_HS_BANDWIDTH, RULE_HEAD_BANDWIDTH - 1);
    return 0;
}

static unsigned int break_bandwidth_alloc(PVDCTest *t)
{
    write_mode(t, 1, CLOCK_1MS);
    wr(t, PVDC_HEAD_SHADOW(1) + PVDC_HS_BANDWIDTH, RULE_HEAD_BANDWIDTH + 1);
    return 1;
}

static unsigned int break_plane_ctrl(PVDCTest *t)
{
    write_plane(t, overlay0(t), 0, 0, 1);
    wr_plane(t, overlay0(t), PVDC_PS_CTRL, PVDC_PS_CTRL_ENABLE | BIT(1));
    return 0;
}

static unsigned int break_plane_ctrl_blend(PVDCTest *t)
{
    write_plane(t, overlay0(t), 0, 0, 1);
    wr_plane(t, overlay0(t), PVDC_PS_CTRL, PVDC_PS_CTRL_ENABLE |
             PVDC_PS_CTRL_BLEND_MASK << PVDC_PS_CTRL_BLEND_SHIFT);
    return 0;
}

static void write_cursor(PVDCTest *t, unsigned int plane, unsigned int head)
{
    write_plane(t, plane, head, 0, t->overlays + 1);
    wr_plane(t, plane, PVDC_PS_FORMAT, PVDC_FMT_ARGB8888);
}

static unsigned int break_plane_ctrl_cursor_rotation(PVDCTest *t)
{
    write_cursor(t, cursor0(t), 0);
    wr_plane(t, cursor0(t), PVDC_PS_CTRL, PVDC_PS_CTRL_ENABLE |
             PVDC_PS_CTRL_ROTATE_180);
    return 0;
}

static unsigned int break_plane_head(PVDCTest *t)
{
    /* A primary plane cannot leave its home head. */
    write_plane(t, primary1(t), 0, 0, 1);
    return 0;
}

/* Make @plane show a 16x16 corner only, to stay within the bandwidth. */
static void shrink_plane(PVDCTest *t, unsigned int plane)
{
    wr_plane(t, plane, PVDC_PS_SRC_W, FP16(16));
    wr_plane(t, plane, PVDC_PS_SRC_H, FP16(16));
    wr_plane(t, plane, PVDC_PS_DST_SIZE, PVDC_XY(16, 16));
}

static unsigned int break_plane_busy(PVDCTest *t)
{
    enable_head(t, 1, CLOCK_1MS);
    write_plane(t, overlay0(t), 1, 0, 1);
    shrink_plane(t, overlay0(t));
    doorbell(t, 1);
    g_assert_cmphex(wait_outcome(t, 1, 2 * SCALE_MS), ==,
                    PVDC_RESULT_APPLIED);
    (void)rd(t, PVDC_REG_INT_ACK);
    /* Still enabled on head 1, now committed on head 0. */
    wr_plane(t, overlay0(t), PVDC_PS_HEAD, 0);
    return 0;
}

static unsigned int break_head_disabled_outside_commit(PVDCTest *t)
{
    enable_head(t, 1, CLOCK_1MS);
    write_plane(t, overlay0(t), 1, 0, 1);
    shrink_plane(t, overlay0(t));
    doorbell(t, 1);
    g_assert_cmphex(wait_outcome(t, 1, 2 * SCALE_MS), ==,
                    PVDC_RESULT_APPLIED);
    (void)rd(t, PVDC_REG_INT_ACK);
    /* Head 1 off, its primary too; overlay 0 now shadows head 0. */
    wr(t, PVDC_HEAD_SHADOW(1) + PVDC_HS_CTRL, 0);
    wr_plane(t, primary1(t), PVDC_PS_CTRL, 0);
    wr_plane(t, overlay0(t), PVDC_PS_HEAD, 0);
    return 1;
}

static unsigned int break_head_disabled(PVDCTest *t)
{
    wr(t, PVDC_HEAD_SHADOW(0) + PVDC_HS_CTRL, 0);
    return 0;
}

static unsigned int break_format(PVDCTest *t)
{
    wr_plane(t, primary0(t), PVDC_PS_FORMAT, PVDC_FMT_YUYV);
    return 0;
}

static unsigned int break_fb_size(PVDCTest *t)
{
    wr_plane(t, primary0(t), PVDC_PS_FB_SIZE, PVDC_XY(0, MODE_H));
    return 0;
}

static unsigned int break_fb_size_yuyv_odd(PVDCTest *t)
{
    write_plane(t, overlay0(t), 0, 0, 1);
    wr_plane(t, overlay0(t), PVDC_PS_FORMAT, PVDC_FMT_YUYV);
    wr_plane(t, overlay0(t), PVDC_PS_FB_SIZE, PVDC_XY(MODE_W - 1, MODE_H));
    wr_plane(t, overlay0(t), PVDC_PS_SRC_W, FP16(MODE_W - 1));
    return 0;
}

static unsigned int break_pitch(PVDCTest *t)
{
    wr_plane(t, primary0(t), PVDC_PS_FB_PITCH, MODE_PITCH - 64);
    return 0;
}

static unsigned int break_pitch_alignment(PVDCTest *t)
{
    wr_plane(t, primary0(t), PVDC_PS_FB_PITCH, MODE_PITCH + 4);
    return 0;
}

static unsigned int break_offset_align(PVDCTest *t)
{
    wr_plane(t, primary0(t), PVDC_PS_FB_OFFSET, 4);
    return 0;
}

static unsigned int break_fb_bounds(PVDCTest *t)
{
    uint64_t size = (uint64_t)MODE_PITCH * (MODE_H - 1) + MODE_PITCH;

    /* Ends 64 bytes past the end of VRAM. */
    wr_plane(t, primary0(t), PVDC_PS_FB_OFFSET, t->vram_size - size + 64);
    return 0;
}

static unsigned int break_src_rect(PVDCTest *t)
{
    wr_plane(t, primary0(t), PVDC_PS_SRC_X, FP16(1));
    return 0;
}

static unsigned int break_dst_rect(PVDCTest *t)
{
    uint32_t max_w = PVDC_X(rd(t, PVDC_REG_MAX_SIZE));

    wr_plane(t, primary0(t), PVDC_PS_DST_POS, PVDC_XY(-(int)max_w - 1, 0));
    return 0;
}

static unsigned int break_cursor(PVDCTest *t)
{
    write_cursor(t, cursor0(t), 0);
    /* 2x upscaling is within the limits, but a cursor never scales */
    wr_plane(t, cursor0(t), PVDC_PS_SRC_W, FP16(MODE_W / 2));
    wr_plane(t, cursor0(t), PVDC_PS_SRC_H, FP16(MODE_H / 2));
    return 0;
}

static unsigned int break_scale_ratio(PVDCTest *t)
{
    wr_plane(t, primary0(t), PVDC_PS_DST_SIZE, PVDC_XY(MODE_W / 5, MODE_H));
    return 0;
}

static unsigned int break_zpos_range(PVDCTest *t)
{
    write_plane(t, overlay0(t), 0, 0, t->overlays + 2);
    return 0;
}

static unsigned int break_zpos_unique(PVDCTest *t)
{
    write_plane(t, overlay0(t), 0, 0, 1);
    write_plane(t, plane_of(t, 0, OVERLAY(1)), 0, 0, 1);
    return 0;
}

static unsigned int break_scalers(PVDCTest *t)
{
    uint64_t reg = PVDC_PLANE_SHADOW(primary0(t)) + PVDC_PS_DST_SIZE;

    wr(t, reg, PVDC_XY(MODE_W / 2, MODE_H / 2));
    write_plane(t, overlay0(t), 0, 0, 1);
    wr_plane(t, overlay0(t), PVDC_PS_DST_SIZE,
             PVDC_XY(MODE_W / 2, MODE_H / 2));
    return 0;
}

static unsigned int break_bandwidth(PVDCTest *t)
{
    write_plane(t, overlay0(t), 0, 0, 1);
    return 0;
}

static const RuleCase rule_cases[] = {
    { "head-reserved-bits", break_head_reserved, PVDC_ERR_HEAD_RESERVED,
      no_plane },
    { "invalid-mode", break_mode, PVDC_ERR_MODE, no_plane },
    { "timing-change-on-enabled-head", break_modeset_required,
      PVDC_ERR_MODESET_REQUIRED, no_plane },
    { "bandwidth-change-on-enabled-head", break_bandwidth_change,
      PVDC_ERR_BANDWIDTH_CHANGE, no_plane },
    { "bandwidth-allocation-over-total", break_bandwidth_alloc,
      PVDC_ERR_BANDWIDTH_ALLOC, no_plane },
    { "plane-reserved-control-bits", break_plane_ctrl, PVDC_ERR_PLANE_CTRL,
      overlay0 },
    { "plane-blend-mode-3", break_plane_ctrl_blend, PVDC_ERR_PLANE_CTRL,
      overlay0 },
    { "cursor-rotation", break_plane_ctrl_cursor_rotation,
      PVDC_ERR_PLANE_CTRL, cursor0 },
    { "primary-on-foreign-head", break_plane_head, PVDC_ERR_PLANE_HEAD,
      primary1 },
    { "plane-enabled-on-other-head", break_plane_busy, PVDC_ERR_PLANE_BUSY,
      overlay0 },
    { "plane-on-disabled-head", break_head_disabled, PVDC_ERR_HEAD_DISABLED,
      primary0 },
    { "plane-left-on-head-being-disabled", break_head_disabled_outside_commit,
      PVDC_ERR_HEAD_DISABLED, overlay0 },
    { "format-not-accepted-by-plane", break_format, PVDC_ERR_FORMAT,
      primary0 },
    { "zero-framebuffer-width", break_fb_size, PVDC_ERR_FB_SIZE, primary0 },
    { "odd-yuyv-width", break_fb_size_yuyv_odd, PVDC_ERR_FB_SIZE, overlay0 },
    { "pitch-smaller-than-a-line", break_pitch, PVDC_ERR_PITCH, primary0 },
    { "misaligned-pitch", break_pitch_alignment, PVDC_ERR_PITCH, primary0 },
    { "misaligned-offset", break_offset_align, PVDC_ERR_OFFSET_ALIGN,
      primary0 },
    { "framebuffer-past-vram", break_fb_bounds, PVDC_ERR_FB_BOUNDS,
      primary0 },
    { "source-outside-framebuffer", break_src_rect, PVDC_ERR_SRC_RECT,
      primary0 },
    { "destination-out-of-range", break_dst_rect, PVDC_ERR_DST_RECT,
      primary0 },
    { "scaled-cursor", break_cursor, PVDC_ERR_CURSOR, cursor0 },
    { "downscale-beyond-limit", break_scale_ratio, PVDC_ERR_SCALE_RATIO,
      primary0 },
    { "zpos-out-of-range", break_zpos_range, PVDC_ERR_ZPOS, overlay0 },
    { "zpos-not-unique", break_zpos_unique, PVDC_ERR_ZPOS, overlay0 },
    { "more-scaled-planes-than-scalers", break_scalers, PVDC_ERR_SCALERS,
      overlay0 },
    { "planes-over-head-bandwidth", break_bandwidth, PVDC_ERR_BANDWIDTH,
      no_plane },
};

static void test_rule(const void *opaque)
{
    const RuleCase *rule = opaque;
    uint32_t expect, status;
    Snapshot before;
    unsigned int head;
    PVDCTest t;

    pvdc_test_start(&t, RULE_PROPS);
    enable_head(&t, 0, CLOCK_1MS);
    (void)rd(&t, PVDC_REG_INT_ACK);

    head = rule->breaks(&t);
    snapshot_active(&t, &before);
    doorbell(&t, head);
    expect = result_of(rule->code, rule->plane(&t));
    g_assert_cmphex(wait_outcome(&t, head, 2 * SCALE_MS), ==, expect);
    assert_active_is(&t, &before);

    status = rd(&t, PVDC_REG_INT_STATUS);
    g_assert_cmphex(status, ==, PVDC_INT(head, PVDC_INT_COMMIT_REJECTED));
    pvdc_test_stop(&t);
}

/* A commit breaking several rules reports the first in the documented order. */
static void test_first_broken_rule_is_reported(void)
{
    unsigned int primary, overlay;
    Snapshot before;
    PVDCTest t;

    pvdc_test_start(&t, RULE_PROPS);
    primary = primary0(&t);
    overlay = overlay0(&t);
    enable_head(&t, 0, CLOCK_1MS);
    snapshot_active(&t, &before);

    /* Head rules come before plane rules. */
    wr_plane(&t, primary, PVDC_PS_FB_PITCH, 4);
    wr(&t, PVDC_HEAD_SHADOW(0) + PVDC_HS_BANDWIDTH, 1);
    doorbell(&t, 0);
    g_assert_cmphex(wait_outcome(&t, 0, 2 * SCALE_MS), ==,
                    head_result(PVDC_ERR_BANDWIDTH_CHANGE));
    wr(&t, PVDC_HEAD_SHADOW(0) + PVDC_HS_BANDWIDTH, RULE_HEAD_BANDWIDTH);

    /* Within a plane: PITCH before OFFSET_ALIGN before SRC_RECT. */
    wr_plane(&t, primary, PVDC_PS_FB_OFFSET, 4);
    wr_plane(&t, primary, PVDC_PS_SRC_W, 0);
    doorbell(&t, 0);
    g_assert_cmphex(wait_outcome(&t, 0, 2 * SCALE_MS), ==,
                    result_of(PVDC_ERR_PITCH, primary));
    wr_plane(&t, primary, PVDC_PS_FB_PITCH, MODE_PITCH);
    doorbell(&t, 0);
    g_assert_cmphex(wait_outcome(&t, 0, 2 * SCALE_MS), ==,
                    result_of(PVDC_ERR_OFFSET_ALIGN, primary));

    /* Planes in index order, whatever their rule; sums last. */
    write_plane(&t, overlay, 0, 0, 1);
    wr_plane(&t, overlay, PVDC_PS_FORMAT, 0);
    doorbell(&t, 0);
    g_assert_cmphex(wait_outcome(&t, 0, 2 * SCALE_MS), ==,
                    result_of(PVDC_ERR_OFFSET_ALIGN, primary));
    wr_plane(&t, primary, PVDC_PS_FB_OFFSET, 0);
    wr_plane(&t, primary, PVDC_PS_SRC_W, FP16(MODE_W));
    doorbell(&t, 0);
    g_assert_cmphex(wait_outcome(&t, 0, 2 * SCALE_MS), ==,
                    result_of(PVDC_ERR_FORMAT, overlay));
    wr_plane(&t, overlay, PVDC_PS_FORMAT, PVDC_FMT_XRGB8888);
    doorbell(&t, 0);
    g_assert_cmphex(wait_outcome(&t, 0, 2 * SCALE_MS), ==,
                    head_result(PVDC_ERR_BANDWIDTH));
    assert_active_is(&t, &before);
    pvdc_test_stop(&t);
}

/* The zpos rule compares against planes the commit does not carry, too. */
static void test_zpos_clash_with_plane_outside_commit(void)
{
    Snapshot before;
    PVDCTest t;

    pvdc_test_start(&t, "heads=2,overlays=2");
    enable_head(&t, 0, CLOCK_1MS);
    enable_head(&t, 1, CLOCK_1MS);
    /* Overlay 0 of head 0, committed on head 1 at zpos 1. */
    write_plane(&t, overlay0(&t), 1, 0, 1);
    doorbell(&t, 1);
    g_assert_cmphex(wait_outcome(&t, 1, 2 * SCALE_MS), ==,
                    PVDC_RESULT_APPLIED);
    /* Head 1's own overlay at zpos 1 too, committed through head 1. */
    write_plane(&t, plane_of(&t, 1, OVERLAY(0)), 1, 0, 1);
    wr_plane(&t, overlay0(&t), PVDC_PS_HEAD, 0);
    wr_plane(&t, overlay0(&t), PVDC_PS_CTRL, 0);
    snapshot_active(&t, &before);
    /*
     * Overlay 0 of head 0 now shadows HEAD 0 so it is not in head 1's
     * commit: its active state (enabled, zpos 1 on head 1) clashes.
     */
    doorbell(&t, 1);
    g_assert_cmphex(wait_outcome(&t, 1, 2 * SCALE_MS), ==,
                    result_of(PVDC_ERR_ZPOS, plane_of(&t, 1, OVERLAY(0))));
    assert_active_is(&t, &before);
    pvdc_test_stop(&t);
}

/* ------------------------------------------------------------------------ */
/* Heads, groups, modesets                                                  */
/* ------------------------------------------------------------------------ */

static void test_heads_are_independent(void)
{
    const uint64_t p0 = period_ns(CLOCK_1MS), p1 = period_ns(CLOCK_2MS);
    int64_t t0, t1, arm;
    PVDCTest t;

    pvdc_test_start(&t, NULL);
    t0 = enable_head(&t, 0, CLOCK_1MS);
    step_to(&t, t0 + p0 / 2);
    t1 = enable_head(&t, 1, CLOCK_2MS);
    g_assert_cmpuint(head_ctl(&t, 0, PVDC_HEAD_FRAME_PERIOD), ==, p0);
    g_assert_cmpuint(head_ctl(&t, 1, PVDC_HEAD_FRAME_PERIOD), ==, p1);

    /* Armed together, each latches at its own next vblank. */
    arm = t1 + p1 + p1 / 8;
    step_to(&t, arm);
    wr(&t, PVDC_HEAD_SHADOW(0) + PVDC_HS_BACKGROUND, 0x000000ff);
    wr(&t, PVDC_HEAD_SHADOW(1) + PVDC_HS_BACKGROUND, 0x0000ff00);
    doorbell(&t, 0);
    doorbell(&t, 1);
    /* head 0: vblanks at t0 + n * p0; head 1 at t1 + n * p1 */
    step_to(&t, t0 + 3 * p0 - 1);
    g_assert_cmpuint(head_ctl(&t, 0, PVDC_HEAD_DOORBELL), ==, 1);
    step_to(&t, t0 + 3 * p0);
    g_assert_cmpuint(head_ctl(&t, 0, PVDC_HEAD_DOORBELL), ==, 0);
    g_assert_cmphex(rd(&t, PVDC_HEAD_ACTIVE(0) + PVDC_HS_BACKGROUND), ==,
                    0xff);
    g_assert_cmpuint(head_ctl(&t, 1, PVDC_HEAD_DOORBELL), ==, 1);
    g_assert_cmphex(rd(&t, PVDC_HEAD_ACTIVE(1) + PVDC_HS_BACKGROUND), ==, 0);
    step_to(&t, t1 + 2 * p1 - 1);
    g_assert_cmpuint(head_ctl(&t, 1, PVDC_HEAD_DOORBELL), ==, 1);
    step_to(&t, t1 + 2 * p1);
    g_assert_cmphex(rd(&t, PVDC_HEAD_ACTIVE(1) + PVDC_HS_BACKGROUND), ==,
                    0xff00);
    g_assert_cmpuint(head_ctl(&t, 0, PVDC_HEAD_VBLANK_COUNT), ==,
                     (t1 + 2 * p1 - t0) / p0);
    g_assert_cmpuint(head_ctl(&t, 1, PVDC_HEAD_VBLANK_COUNT), ==, 2);
    /* A rejected commit on head 1 does not touch head 0. */
    wr(&t, PVDC_HEAD_SHADOW(1) + PVDC_HS_PIXEL_CLOCK, CLOCK_1MS);
    doorbell(&t, 1);
    g_assert_cmphex(wait_outcome(&t, 1, p1), ==,
                    head_result(PVDC_ERR_MODESET_REQUIRED));
    g_assert_cmphex(head_ctl(&t, 0, PVDC_HEAD_RESULT), ==,
                    PVDC_RESULT_APPLIED);
    pvdc_test_stop(&t);
}

static void test_multi_head_commit_is_all_or_none(void)
{
    const uint64_t p0 = period_ns(CLOCK_1MS), p1 = period_ns(CLOCK_2MS);
    Snapshot before;
    int64_t t0, t1;
    PVDCTest t;

    pvdc_test_start(&t, NULL);
    t0 = enable_head(&t, 0, CLOCK_1MS);
    step_to(&t, t0 + p0 / 4);
    t1 = enable_head(&t, 1, CLOCK_2MS);
    snapshot_active(&t, &before);

    /* Nonexistent heads in the mask: the whole write is ignored. */
    wr(&t, PVDC_REG_MULTI_DOORBELL, BIT(0) | BIT(t.heads));
    wr(&t, PVDC_REG_MULTI_DOORBELL, 0);
    g_assert_cmphex(rd(&t, PVDC_REG_MULTI_DOORBELL), ==, 0);

    /* Both valid: the group latches at the later of the two vblanks. */
    wr(&t, PVDC_HEAD_SHADOW(0) + PVDC_HS_BACKGROUND, 0x000000ff);
    wr(&t, PVDC_HEAD_SHADOW(1) + PVDC_HS_BACKGROUND, 0x0000ff00);
    wr(&t, PVDC_REG_MULTI_DOORBELL, BIT(0) | BIT(1));
    g_assert_cmphex(rd(&t, PVDC_REG_MULTI_DOORBELL), ==, BIT(0) | BIT(1));
    g_assert_cmpuint(head_ctl(&t, 0, PVDC_HEAD_ARMED_SEQ), ==, 2);
    g_assert_cmpuint(head_ctl(&t, 1, PVDC_HEAD_ARMED_SEQ), ==, 2);
    step_to(&t, t0 + p0);
    assert_active_is(&t, &before);
    step_to(&t, t1 + p1 - 1);
    assert_active_is(&t, &before);
    step_to(&t, t1 + p1);
    g_assert_cmphex(rd(&t, PVDC_HEAD_ACTIVE(0) + PVDC_HS_BACKGROUND), ==,
                    0xff);
    g_assert_cmphex(rd(&t, PVDC_HEAD_ACTIVE(1) + PVDC_HS_BACKGROUND), ==,
                    0xff00);
    g_assert_cmphex(head_ctl(&t, 0, PVDC_HEAD_RESULT), ==,
                    PVDC_RESULT_APPLIED);
    g_assert_cmphex(head_ctl(&t, 1, PVDC_HEAD_RESULT), ==,
                    PVDC_RESULT_APPLIED);
    g_assert_cmphex(rd(&t, PVDC_REG_INT_ACK), ==,
                    PVDC_INT(0, PVDC_INT_COMMIT_DONE) |
                    PVDC_INT(1, PVDC_INT_COMMIT_DONE));

    /* Head 1 breaks a rule: neither head changes. */
    snapshot_active(&t, &before);
    wr(&t, PVDC_HEAD_SHADOW(0) + PVDC_HS_BACKGROUND, 0x00ff0000);
    wr_plane(&t, plane_of(&t, 1, PRIMARY), PVDC_PS_FB_PITCH, 4);
    wr(&t, PVDC_REG_MULTI_DOORBELL, BIT(0) | BIT(1));
    g_assert_cmphex(wait_outcome(&t, 1, 2 * p1), ==,
                    result_of(PVDC_ERR_PITCH, plane_of(&t, 1, PRIMARY)));
    g_assert_cmphex(wait_outcome(&t, 0, 0), ==,
                    head_result(PVDC_ERR_GROUP));
    assert_active_is(&t, &before);
    g_assert_cmphex(rd(&t, PVDC_REG_INT_ACK), ==,
                    PVDC_INT(0, PVDC_INT_COMMIT_REJECTED) |
                    PVDC_INT(1, PVDC_INT_COMMIT_REJECTED));
    pvdc_test_stop(&t);
}

static void test_timings_change_only_through_disable_enable(void)
{
    const uint64_t p0 = period_ns(CLOCK_1MS), p1 = period_ns(CLOCK_2MS);
    unsigned int primary;
    int64_t t0, off, on;
    PVDCTest t;

    pvdc_test_start(&t, NULL);
    primary = plane_of(&t, 0, PRIMARY);
    t0 = enable_head(&t, 0, CLOCK_1MS);

    /* Directly: refused. */
    wr(&t, PVDC_HEAD_SHADOW(0) + PVDC_HS_PIXEL_CLOCK, CLOCK_2MS);
    doorbell(&t, 0);
    g_assert_cmphex(wait_outcome(&t, 0, p0), ==,
                    head_result(PVDC_ERR_MODESET_REQUIRED));
    g_assert_cmpuint(head_ctl(&t, 0, PVDC_HEAD_FRAME_PERIOD), ==, p0);

    /* Disable at a vblank: the counter stops there. */
    step_to(&t, t0 + 5 * p0 + p0 / 2);
    wr(&t, PVDC_HEAD_SHADOW(0) + PVDC_HS_CTRL, 0);
    wr_plane(&t, primary, PVDC_PS_CTRL, 0);
    doorbell(&t, 0);
    off = t0 + 6 * p0;
    g_assert_cmphex(wait_outcome(&t, 0, p0), ==, PVDC_RESULT_APPLIED);
    g_assert_cmpint(now_ns(&t), ==, off);
    g_assert_cmpuint(head_ctl(&t, 0, PVDC_HEAD_FRAME_PERIOD), ==, 0);
    step_to(&t, off + 10 * p0);
    g_assert_cmpuint(head_ctl(&t, 0, PVDC_HEAD_VBLANK_COUNT), ==, 6);
    g_assert_cmpuint(head_ctl(&t, 0, PVDC_HEAD_VBLANK_TIME_LO), ==, off);

    /* Enable with the new clock: a new timeline, the count goes on. */
    write_mode(&t, 0, CLOCK_2MS);
    wr_plane(&t, primary, PVDC_PS_CTRL, PVDC_PS_CTRL_ENABLE);
    on = now_ns(&t);
    doorbell(&t, 0);
    g_assert_cmphex(wait_outcome(&t, 0, 0), ==, PVDC_RESULT_APPLIED);
    g_assert_cmpuint(head_ctl(&t, 0, PVDC_HEAD_FRAME_PERIOD), ==, p1);
    g_assert_cmphex(rd(&t, PVDC_HEAD_ACTIVE(0) + PVDC_HS_PIXEL_CLOCK), ==,
                    CLOCK_2MS);
    step_to(&t, on + 3 * p1 - 1);
    g_assert_cmpuint(head_ctl(&t, 0, PVDC_HEAD_VBLANK_COUNT), ==, 6 + 2);
    step_to(&t, on + 3 * p1);
    g_assert_cmpuint(head_ctl(&t, 0, PVDC_HEAD_VBLANK_COUNT), ==, 6 + 3);
    g_assert_cmpuint(head_ctl(&t, 0, PVDC_HEAD_VBLANK_TIME_LO), ==,
                     on + 3 * p1);
    pvdc_test_stop(&t);
}

static void test_link_up_delay_is_respected(void)
{
    const uint64_t delay = 5 * SCALE_MS, p0 = period_ns(CLOCK_1MS);
    int64_t arm, t0;
    PVDCTest t;

    pvdc_test_start(&t, "x-link-up-delay-ms=5");
    step_to(&t, 123456);
    arm = now_ns(&t);
    write_mode(&t, 0, CLOCK_1MS);
    write_plane(&t, plane_of(&t, 0, PRIMARY), 0, 0, 0);
    doorbell(&t, 0);
    step_to(&t, arm + delay - 1);
    g_assert_cmpuint(head_ctl(&t, 0, PVDC_HEAD_DOORBELL), ==, 1);
    g_assert_cmphex(rd(&t, PVDC_HEAD_ACTIVE(0) + PVDC_HS_CTRL), ==, 0);
    step_to(&t, arm + delay);
    g_assert_cmpuint(head_ctl(&t, 0, PVDC_HEAD_DOORBELL), ==, 0);
    g_assert_cmphex(rd(&t, PVDC_HEAD_ACTIVE(0) + PVDC_HS_CTRL), ==,
                    PVDC_HS_CTRL_ENABLE);
    g_assert_cmpuint(head_ctl(&t, 0, PVDC_HEAD_VBLANK_TIME_LO), ==,
                     arm + delay);
    t0 = arm + delay;

    /* In a group with an enabled head, the group waits for the link. */
    step_to(&t, t0 + p0 / 2);
    arm = now_ns(&t);
    wr(&t, PVDC_HEAD_SHADOW(0) + PVDC_HS_BACKGROUND, 0x00abcdef);
    write_mode(&t, 1, CLOCK_1MS);
    write_plane(&t, plane_of(&t, 1, PRIMARY), 1, 0, 0);
    wr(&t, PVDC_REG_MULTI_DOORBELL, BIT(0) | BIT(1));
    step_to(&t, arm + delay - 1);
    g_assert_cmphex(rd(&t, PVDC_REG_MULTI_DOORBELL), ==, BIT(0) | BIT(1));
    g_assert_cmphex(rd(&t, PVDC_HEAD_ACTIVE(0) + PVDC_HS_BACKGROUND), ==, 0);
    step_to(&t, arm + delay);
    g_assert_cmphex(rd(&t, PVDC_REG_MULTI_DOORBELL), ==, 0);
    g_assert_cmphex(rd(&t, PVDC_HEAD_ACTIVE(0) + PVDC_HS_BACKGROUND), ==,
                    0x00abcdef);
    g_assert_cmphex(rd(&t, PVDC_HEAD_ACTIVE(1) + PVDC_HS_CTRL), ==,
                    PVDC_HS_CTRL_ENABLE);
    pvdc_test_stop(&t);
}

static void test_disabled_head_commit_latches_at_once(void)
{
    PVDCTest t;
    int64_t arm;

    pvdc_test_start(&t, "x-link-up-delay-ms=5");
    step_to(&t, 1000);
    arm = now_ns(&t);
    wr(&t, PVDC_HEAD_SHADOW(1) + PVDC_HS_BACKGROUND, 0x123456);
    doorbell(&t, 1);
    g_assert_cmphex(wait_outcome(&t, 1, 0), ==, PVDC_RESULT_APPLIED);
    g_assert_cmpint(now_ns(&t), ==, arm);
    g_assert_cmphex(rd(&t, PVDC_HEAD_ACTIVE(1) + PVDC_HS_BACKGROUND), ==,
                    0x123456);
    pvdc_test_stop(&t);
}

/* ------------------------------------------------------------------------ */
/* Vblank                                                                   */
/* ------------------------------------------------------------------------ */

static uint64_t vblank_time(PVDCTest *t, unsigned int head)
{
    uint32_t lo = head_ctl(t, head, PVDC_HEAD_VBLANK_TIME_LO);

    return lo | (uint64_t)head_ctl(t, head, PVDC_HEAD_VBLANK_TIME_HI) << 32;
}

static void test_vblank_counter_and_timestamp_are_exact(void)
{
    const uint64_t p1 = period_ns(CLOCK_2MS);
    static const int64_t offsets[] = {
        0, 1, 1999999, 2000000, 2000001, 7 * 2000000 - 1, 7 * 2000000,
        123456789, 5 * NANOSECONDS_PER_SECOND + 17,
    };
    uint32_t lo, hi;
    int64_t t0;
    PVDCTest t;

    pvdc_test_start(&t, NULL);
    step_to(&t, 777);
    t0 = enable_head(&t, 1, CLOCK_2MS);
    g_assert_cmpuint(head_ctl(&t, 1, PVDC_HEAD_VBLANK_COUNT), ==, 0);
    g_assert_cmpuint(vblank_time(&t, 1), ==, t0);

    for (int i = 0; i < ARRAY_SIZE(offsets); i++) {
        uint64_t n = offsets[i] / p1;

        step_to(&t, t0 + offsets[i]);
        g_assert_cmpuint(head_ctl(&t, 1, PVDC_HEAD_VBLANK_COUNT), ==, n);
        g_assert_cmpuint(vblank_time(&t, 1), ==, t0 + n * p1);
    }
    /* Head 0 never enabled: no vblanks. */
    g_assert_cmpuint(head_ctl(&t, 0, PVDC_HEAD_VBLANK_COUNT), ==, 0);
    g_assert_cmpuint(vblank_time(&t, 0), ==, 0);

    /* Reading LO latches HI: a later HI read belongs to that LO. */
    lo = head_ctl(&t, 1, PVDC_HEAD_VBLANK_TIME_LO);
    hi = extract64(t0 + (5 * NANOSECONDS_PER_SECOND + 17) / p1 * p1, 32, 32);
    step_to(&t, now_ns(&t) + 5 * NANOSECONDS_PER_SECOND);
    g_assert_cmpuint(head_ctl(&t, 1, PVDC_HEAD_VBLANK_TIME_HI), ==, hi);
    g_assert_cmpuint(lo, ==,
                     (uint32_t)(t0 + (5 * NANOSECONDS_PER_SECOND + 17) /
                                p1 * p1));
    g_assert_cmpuint(vblank_time(&t, 1), ==,
                     t0 + (now_ns(&t) - t0) / p1 * p1);
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

    enable_head(&t, 0, CLOCK_1MS);
    writes = pvdc_statistic(t.qts, "x-mmio-writes");
    g_assert_cmpuint(writes, >, 0);
    g_assert_cmpuint(pvdc_statistic(t.qts, "x-commits-applied"), ==, 1);

    /* Reads, the interrupt acknowledge included, are not writes. */
    rd(&t, PVDC_REG_INT_ACK);
    head_ctl(&t, 0, PVDC_HEAD_RESULT);
    g_assert_cmpuint(pvdc_statistic(t.qts, "x-mmio-writes"), ==, writes);

    wr(&t, PVDC_PLANE_SHADOW(plane_of(&t, 0, PRIMARY)) + PVDC_PS_FORMAT, 0);
    doorbell(&t, 0);
    g_assert_cmphex(wait_outcome(&t, 0, 2 * SCALE_MS), ==,
                    result_of(PVDC_ERR_FORMAT, plane_of(&t, 0, PRIMARY)));
    g_assert_cmpuint(pvdc_statistic(t.qts, "x-mmio-writes"), ==, writes + 2);
    g_assert_cmpuint(pvdc_statistic(t.qts, "x-commits-applied"), ==, 1);
    g_assert_cmpuint(pvdc_statistic(t.qts, "x-commits-rejected"), ==, 1);
    pvdc_test_stop(&t);
}

static void test_no_timer_callbacks_while_idle(void)
{
    const uint64_t p0 = period_ns(CLOCK_1MS);
    uint64_t before;
    int64_t t0;
    PVDCTest t;

    pvdc_test_start(&t, NULL);
    step_to(&t, 100 * p0);
    g_assert_cmpuint(timer_callbacks(&t), ==, 0);

    t0 = enable_head(&t, 0, CLOCK_1MS);
    before = timer_callbacks(&t);
    g_assert_cmpuint(before, ==, 1);
    /* Enabled, but no vblank interrupt and nothing armed. */
    step_to(&t, t0 + 100 * p0 + p0 / 2);
    g_assert_cmpuint(timer_callbacks(&t), ==, before);
    g_assert_cmpuint(head_ctl(&t, 0, PVDC_HEAD_VBLANK_COUNT), ==, 100);

    /* With the vblank interrupt: one callback per frame. */
    wr(&t, PVDC_REG_INT_ENABLE, PVDC_INT(0, PVDC_INT_VBLANK));
    step_to(&t, t0 + 110 * p0 + p0 / 2);
    g_assert_cmpuint(timer_callbacks(&t), ==, before + 10);
    wr(&t, PVDC_REG_INT_ENABLE, 0);
    step_to(&t, t0 + 200 * p0);
    g_assert_cmpuint(timer_callbacks(&t), ==, before + 10);

    /* An armed commit: one callback, at its latch point. */
    doorbell(&t, 0);
    step_to(&t, t0 + 300 * p0);
    g_assert_cmpuint(timer_callbacks(&t), ==, before + 11);
    pvdc_test_stop(&t);
}

/* ------------------------------------------------------------------------ */
/* Interrupts                                                               */
/* ------------------------------------------------------------------------ */

/* The GSI on which the device's INTA# reaches the I/O APIC. */
static int find_intx_gsi(PVDCTest *t)
{
    int gsi = -1;

    g_assert_cmphex(rd(t, PVDC_REG_INT_STATUS), !=, 0);
    wr(t, PVDC_REG_INT_ENABLE, MAKE_64BIT_MASK(0, 4 * t->heads));
    for (int i = 0; i < 24; i++) {
        if (qtest_get_irq(t->qts, i)) {
            g_assert_cmpint(gsi, ==, -1);
            gsi = i;
        }
    }
    g_assert_cmpint(gsi, >=, 0);
    wr(t, PVDC_REG_INT_ENABLE, 0);
    g_assert_false(qtest_get_irq(t->qts, gsi));
    return gsi;
}

static void test_interrupt_status_enable_and_ack(void)
{
    const uint64_t p0 = period_ns(CLOCK_1MS);
    const uint32_t done0 = PVDC_INT(0, PVDC_INT_COMMIT_DONE);
    const uint32_t done1 = PVDC_INT(1, PVDC_INT_COMMIT_DONE);
    const uint32_t vblank0 = PVDC_INT(0, PVDC_INT_VBLANK);
    PVDCTest t;
    int64_t t0;
    int gsi;

    pvdc_test_start(&t, NULL);
    qtest_irq_intercept_in(t.qts, "ioapic");

    /* Status is set whatever the enable says; the line is not. */
    t0 = enable_head(&t, 0, CLOCK_1MS);
    enable_head(&t, 1, CLOCK_1MS);
    g_assert_cmphex(rd(&t, PVDC_REG_INT_STATUS), ==, done0 | done1);
    gsi = find_intx_gsi(&t);

    /* Enabling a pending bit raises the line; W1C of it lowers it. */
    wr(&t, PVDC_REG_INT_ENABLE, done1);
    g_assert_true(qtest_get_irq(t.qts, gsi));
    wr(&t, PVDC_REG_INT_STATUS, done0);
    g_assert_cmphex(rd(&t, PVDC_REG_INT_STATUS), ==, done1);
    g_assert_true(qtest_get_irq(t.qts, gsi));
    wr(&t, PVDC_REG_INT_STATUS, done1);
    g_assert_cmphex(rd(&t, PVDC_REG_INT_STATUS), ==, 0);
    g_assert_false(qtest_get_irq(t.qts, gsi));

    /* Vblank interrupts: only from the vblank after enabling. */
    step_to(&t, t0 + 3 * p0 + p0 / 2);
    wr(&t, PVDC_REG_INT_ENABLE, vblank0);
    g_assert_cmphex(rd(&t, PVDC_REG_INT_STATUS), ==, 0);
    step_to(&t, t0 + 4 * p0 - 1);
    g_assert_false(qtest_get_irq(t.qts, gsi));
    step_to(&t, t0 + 4 * p0);
    g_assert_true(qtest_get_irq(t.qts, gsi));
    g_assert_cmphex(rd(&t, PVDC_REG_INT_STATUS), ==, vblank0);

    /* INT_ACK: one read acknowledges everything it returns. */
    g_assert_cmphex(rd(&t, PVDC_REG_INT_ACK), ==, vblank0);
    g_assert_false(qtest_get_irq(t.qts, gsi));
    g_assert_cmphex(rd(&t, PVDC_REG_INT_STATUS), ==, 0);
    g_assert_cmphex(rd(&t, PVDC_REG_INT_ACK), ==, 0);
    step_to(&t, t0 + 5 * p0);
    g_assert_true(qtest_get_irq(t.qts, gsi));

    /* Masking keeps the status but drops the line. */
    wr(&t, PVDC_REG_INT_ENABLE, 0);
    g_assert_false(qtest_get_irq(t.qts, gsi));
    g_assert_cmphex(rd(&t, PVDC_REG_INT_STATUS), ==, vblank0);

    /* Bits of heads that do not exist: the write is ignored. */
    wr(&t, PVDC_REG_INT_ENABLE, PVDC_INT(t.heads, PVDC_INT_VBLANK));
    g_assert_cmphex(rd(&t, PVDC_REG_INT_ENABLE), ==, 0);

    /* A primary flip in three accesses. */
    wr(&t, PVDC_REG_INT_ENABLE, done0);
    (void)rd(&t, PVDC_REG_INT_ACK);
    wr_plane(&t, plane_of(&t, 0, PRIMARY), PVDC_PS_FB_OFFSET, 4 * KiB);
    doorbell(&t, 0);
    step_to(&t, t0 + 6 * p0);
    g_assert_true(qtest_get_irq(t.qts, gsi));
    g_assert_cmphex(rd(&t, PVDC_REG_INT_ACK), ==, done0);
    g_assert_false(qtest_get_irq(t.qts, gsi));
    g_assert_cmphex(rd(&t, PVDC_PLANE_ACTIVE(0) + PVDC_PS_FB_OFFSET), ==,
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
    const uint64_t p0 = period_ns(CLOCK_1MS);
    const uint32_t vblank0 = PVDC_INT(0, PVDC_INT_VBLANK);
    const uint32_t done0 = PVDC_INT(0, PVDC_INT_COMMIT_DONE);
    PVDCTest t;
    int64_t t0;
    int gsi;

    pvdc_test_start(&t, NULL);
    qtest_irq_intercept_in(t.qts, "ioapic");
    t0 = enable_head(&t, 0, CLOCK_1MS);
    gsi = find_intx_gsi(&t);
    (void)rd(&t, PVDC_REG_INT_ACK);

    qtest_writel(t.qts, MSI_ADDR, 0);
    msi_enable(&t);
    wr(&t, PVDC_REG_INT_ENABLE, vblank0 | done0);
    g_assert_false(msi_sent(&t));

    /* One message when an enabled bit becomes set, never INTx. */
    step_to(&t, t0 + p0);
    g_assert_true(msi_sent(&t));
    g_assert_false(qtest_get_irq(t.qts, gsi));
    /* Set again while still set: no new message. */
    step_to(&t, t0 + 2 * p0);
    g_assert_false(msi_sent(&t));
    /* Another bit: a message. */
    doorbell(&t, 0);
    step_to(&t, t0 + 3 * p0);
    g_assert_true(msi_sent(&t));
    g_assert_cmphex(rd(&t, PVDC_REG_INT_ACK), ==, vblank0 | done0);
    step_to(&t, t0 + 4 * p0);
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

/*
 * A guest may aim MSI at the device's own doorbell: the message must not
 * re-enter the register file while a commit is being latched.
 */
static void test_msi_into_own_registers_is_harmless(void)
{
    const uint64_t p0 = period_ns(CLOCK_1MS);
    uint8_t cap;
    PVDCTest t;
    int64_t t0;

    pvdc_test_start(&t, NULL);
    t0 = enable_head(&t, 0, CLOCK_1MS);
    (void)rd(&t, PVDC_REG_INT_ACK);
    cap = qpci_find_capability(t.dev, PCI_CAP_ID_MSI, 0);
    qpci_config_writel(t.dev, cap + PCI_MSI_ADDRESS_LO,
                       t.mmio.addr + PVDC_HEAD_CONTROL(1) +
                       PVDC_HEAD_DOORBELL);
    qpci_config_writel(t.dev, cap + PCI_MSI_ADDRESS_HI, t.mmio.addr >> 32);
    qpci_config_writew(t.dev, cap + PCI_MSI_DATA_64, 1);
    qpci_config_writew(t.dev, cap + PCI_MSI_FLAGS,
                       qpci_config_readw(t.dev, cap + PCI_MSI_FLAGS) |
                       PCI_MSI_FLAGS_ENABLE);
    wr(&t, PVDC_REG_INT_ENABLE, PVDC_INT(0, PVDC_INT_COMMIT_DONE));

    doorbell(&t, 0);
    step_to(&t, t0 + 2 * p0);
    g_assert_cmphex(head_ctl(&t, 0, PVDC_HEAD_RESULT), ==,
                    PVDC_RESULT_APPLIED);
    g_assert_cmphex(rd(&t, PVDC_REG_INT_STATUS), ==,
                    PVDC_INT(0, PVDC_INT_COMMIT_DONE));
    g_assert_cmpuint(head_ctl(&t, 1, PVDC_HEAD_ARMED_SEQ), ==, 0);
    g_assert_cmphex(rd(&t, PVDC_REG_ID), ==, PVDC_ID);
    pvdc_test_stop(&t);
}

/* ------------------------------------------------------------------------ */
/* Frame CRCs and connectors                                                */
/* ------------------------------------------------------------------------ */

static void test_crc_follows_the_active_frame(void)
{
    const uint64_t p0 = period_ns(CLOCK_1MS);
    g_autofree uint32_t *fb = g_new(uint32_t, MODE_W * MODE_H);
    g_autofree uint32_t *le = g_new(uint32_t, MODE_W * MODE_H);
    unsigned int primary;
    PVDCTest t;
    int64_t t0;
    int i;

    pvdc_test_start(&t, NULL);
    primary = plane_of(&t, 0, PRIMARY);
    for (i = 0; i < MODE_W * MODE_H; i++) {
        fb[i] = 0xff000000 | (i * 0x010203);
        le[i] = cpu_to_le32(fb[i]);
    }
    qtest_memwrite(t.qts, t.vram.addr, le, MODE_W * MODE_H * sizeof(*le));

    t0 = enable_head(&t, 0, CLOCK_1MS);
    wr(&t, PVDC_HEAD_CONTROL(0) + PVDC_HEAD_CRC_CTRL, PVDC_CRC_CTRL_ENABLE);
    step_to(&t, t0 + 2 * p0);
    g_assert_cmphex(head_ctl(&t, 0, PVDC_HEAD_CRC_VALUE), ==,
                    pvdc_frame_crc(fb, MODE_W * MODE_H));
    g_assert_cmpuint(head_ctl(&t, 0, PVDC_HEAD_CRC_FRAME), ==, 2);

    /* Primary off: the frame after the commit is the background alone. */
    wr_plane(&t, primary, PVDC_PS_CTRL, 0);
    wr(&t, PVDC_HEAD_SHADOW(0) + PVDC_HS_BACKGROUND, 0x00123456);
    doorbell(&t, 0);
    step_to(&t, t0 + 3 * p0 - 1);
    g_assert_cmphex(head_ctl(&t, 0, PVDC_HEAD_CRC_VALUE), ==,
                    pvdc_frame_crc(fb, MODE_W * MODE_H));
    step_to(&t, t0 + 3 * p0);
    for (i = 0; i < MODE_W * MODE_H; i++) {
        fb[i] = 0x00123456;
    }
    g_assert_cmphex(head_ctl(&t, 0, PVDC_HEAD_CRC_VALUE), ==,
                    pvdc_frame_crc(fb, MODE_W * MODE_H));
    g_assert_cmpuint(head_ctl(&t, 0, PVDC_HEAD_CRC_FRAME), ==, 3);
    pvdc_test_stop(&t);
}

static void qom_set_uint(PVDCTest *t, const char *prop, uint32_t val)
{
    qtest_qmp_assert_success(t->qts, "{ 'execute': 'qom-set', 'arguments': "
                             "{ 'path': %s, 'property': %s, 'value': %u } }",
                             PVDC_QOM_PATH, prop, val);
}

static void test_connector_change_raises_hotplug(void)
{
    uint32_t edid[2];
    PVDCTest t;

    pvdc_test_start(&t, "xres=640,yres=480");
    g_assert_cmphex(head_ctl(&t, 1, PVDC_HEAD_PREFERRED), ==,
                    PVDC_XY(640, 480));
    g_assert_cmphex(head_ctl(&t, 1, PVDC_HEAD_SUGGESTED_POS), ==,
                    PVDC_XY(640, 0));
    rd_block(&t, PVDC_EDID(0) + 0x38, edid, ARRAY_SIZE(edid));

    /* Head 0 grows: head 1, placed after it, moves too. */
    qom_set_uint(&t, "head0-xres", 800);
    qom_set_uint(&t, "head0-yres", 600);
    g_assert_cmphex(rd(&t, PVDC_REG_INT_STATUS), ==,
                    PVDC_INT(0, PVDC_INT_HOTPLUG) |
                    PVDC_INT(1, PVDC_INT_HOTPLUG));
    g_assert_cmphex(head_ctl(&t, 0, PVDC_HEAD_PREFERRED), ==,
                    PVDC_XY(800, 600));
    g_assert_cmphex(head_ctl(&t, 1, PVDC_HEAD_SUGGESTED_POS), ==,
                    PVDC_XY(800, 0));
    /* The detailed timing descriptor follows the preferred mode. */
    g_assert_cmphex(rd(&t, PVDC_EDID(0) + 0x38), !=, edid[0]);

    /* An out-of-range value is refused and changes nothing. */
    (void)rd(&t, PVDC_REG_INT_ACK);
    qobject_unref(qtest_qmp_assert_failure_ref(t.qts,
                  "{ 'execute': 'qom-set', 'arguments': { 'path': %s, "
                  "'property': 'head1-xres', 'value': 0 } }",
                  PVDC_QOM_PATH));
    g_assert_cmphex(rd(&t, PVDC_REG_INT_STATUS), ==, 0);
    pvdc_test_stop(&t);
}

/* ------------------------------------------------------------------------ */
/* Doorbell overrun, reset, migration                                       */
/* ------------------------------------------------------------------------ */

static void test_doorbell_overrun_keeps_the_armed_commit(void)
{
    const uint64_t p0 = period_ns(CLOCK_1MS);
    PVDCTest t;
    int64_t t0;

    pvdc_test_start(&t, NULL);
    t0 = enable_head(&t, 0, CLOCK_1MS);
    wr(&t, PVDC_HEAD_SHADOW(0) + PVDC_HS_BACKGROUND, 0x111111);
    doorbell(&t, 0);
    wr(&t, PVDC_HEAD_SHADOW(0) + PVDC_HS_BACKGROUND, 0x222222);
    doorbell(&t, 0);
    g_assert_cmpuint(head_ctl(&t, 0, PVDC_HEAD_ARMED_SEQ), ==, 2);
    g_assert_cmphex(head_ctl(&t, 0, PVDC_HEAD_STATUS), ==,
                    PVDC_HEAD_STATUS_DOORBELL_OVERRUN);

    /* A group with an armed member is ignored as a whole. */
    wr(&t, PVDC_REG_MULTI_DOORBELL, BIT(0) | BIT(1));
    g_assert_cmphex(rd(&t, PVDC_REG_MULTI_DOORBELL), ==, BIT(0));
    g_assert_cmpuint(head_ctl(&t, 1, PVDC_HEAD_ARMED_SEQ), ==, 0);
    g_assert_cmphex(head_ctl(&t, 1, PVDC_HEAD_STATUS), ==, 0);

    /* Doorbell values other than 1 do nothing. */
    wr(&t, PVDC_HEAD_CONTROL(1) + PVDC_HEAD_DOORBELL, 0);
    wr(&t, PVDC_HEAD_CONTROL(1) + PVDC_HEAD_DOORBELL, 3);
    g_assert_cmpuint(head_ctl(&t, 1, PVDC_HEAD_ARMED_SEQ), ==, 0);

    step_to(&t, t0 + p0);
    g_assert_cmphex(rd(&t, PVDC_HEAD_ACTIVE(0) + PVDC_HS_BACKGROUND), ==,
                    0x111111);
    g_assert_cmpuint(head_ctl(&t, 0, PVDC_HEAD_DONE_SEQ), ==, 2);
    /* RW1C, and it stays set across the commit. */
    g_assert_cmphex(head_ctl(&t, 0, PVDC_HEAD_STATUS), ==,
                    PVDC_HEAD_STATUS_DOORBELL_OVERRUN);
    wr(&t, PVDC_HEAD_CONTROL(0) + PVDC_HEAD_STATUS,
       PVDC_HEAD_STATUS_DOORBELL_OVERRUN);
    g_assert_cmphex(head_ctl(&t, 0, PVDC_HEAD_STATUS), ==, 0);

    /* Once latched, the doorbell works again. */
    doorbell(&t, 0);
    g_assert_cmpuint(head_ctl(&t, 0, PVDC_HEAD_ARMED_SEQ), ==, 3);
    step_to(&t, t0 + 2 * p0);
    g_assert_cmphex(rd(&t, PVDC_HEAD_ACTIVE(0) + PVDC_HS_BACKGROUND), ==,
                    0x222222);
    pvdc_test_stop(&t);
}

static void amend(PVDCTest *t, unsigned int head)
{
    wr(t, PVDC_HEAD_CONTROL(head) + PVDC_HEAD_DOORBELL, PVDC_DOORBELL_AMEND);
}

static void test_amend_joins_the_armed_commit(void)
{
    const uint64_t p0 = period_ns(CLOCK_1MS), p1 = period_ns(CLOCK_2MS);
    unsigned int cursor;
    PVDCTest t;
    int64_t t0, t1;

    pvdc_test_start(&t, NULL);
    g_assert_cmphex(rd(&t, PVDC_REG_FEATURES) & PVDC_FEATURE_DOORBELL_AMEND,
                    ==, PVDC_FEATURE_DOORBELL_AMEND);
    t0 = enable_head(&t, 0, CLOCK_1MS);
    cursor = cursor_of(&t, 0);
    rd(&t, PVDC_REG_INT_ACK);

    /* With nothing armed, an amend is a doorbell. */
    wr(&t, PVDC_HEAD_SHADOW(0) + PVDC_HS_BACKGROUND, 0x111111);
    amend(&t, 0);
    g_assert_cmpuint(head_ctl(&t, 0, PVDC_HEAD_ARMED_SEQ), ==, 2);
    g_assert_cmpuint(head_ctl(&t, 0, PVDC_HEAD_DOORBELL), ==, 1);

    /* Armed: the later state joins it, latched at the same vblank. */
    step_to(&t, t0 + p0 / 2);
    wr(&t, PVDC_HEAD_SHADOW(0) + PVDC_HS_BACKGROUND, 0x222222);
    wr_plane(&t, cursor, PVDC_PS_FORMAT, PVDC_FMT_ARGB8888);
    wr_plane(&t, cursor, PVDC_PS_FB_PITCH, MODE_PITCH);
    wr_plane(&t, cursor, PVDC_PS_FB_SIZE, PVDC_XY(16, 16));
    wr_plane(&t, cursor, PVDC_PS_SRC_W, FP16(16));
    wr_plane(&t, cursor, PVDC_PS_SRC_H, FP16(16));
    wr_plane(&t, cursor, PVDC_PS_DST_SIZE, PVDC_XY(16, 16));
    wr_plane(&t, cursor, PVDC_PS_DST_POS, PVDC_XY(5, 7));
    wr_plane(&t, cursor, PVDC_PS_ZPOS, 1);
    wr_plane(&t, cursor, PVDC_PS_CTRL, PVDC_PS_CTRL_ENABLE);
    amend(&t, 0);
    wr_plane(&t, cursor, PVDC_PS_DST_POS, PVDC_XY(9, 11));
    amend(&t, 0);
    g_assert_cmpuint(head_ctl(&t, 0, PVDC_HEAD_ARMED_SEQ), ==, 4);
    g_assert_cmphex(head_ctl(&t, 0, PVDC_HEAD_STATUS), ==, 0);
    step_to(&t, t0 + p0 - 1);
    g_assert_cmphex(rd(&t, PVDC_HEAD_ACTIVE(0) + PVDC_HS_BACKGROUND), ==, 0);
    g_assert_cmphex(rd(&t, PVDC_REG_INT_STATUS), ==, 0);
    step_to(&t, t0 + p0);
    g_assert_cmphex(rd(&t, PVDC_HEAD_ACTIVE(0) + PVDC_HS_BACKGROUND), ==,
                    0x222222);
    g_assert_cmphex(rd(&t, PVDC_PLANE_ACTIVE(cursor) + PVDC_PS_DST_POS), ==,
                    PVDC_XY(9, 11));
    g_assert_cmpuint(head_ctl(&t, 0, PVDC_HEAD_DONE_SEQ), ==, 4);
    g_assert_cmphex(head_ctl(&t, 0, PVDC_HEAD_RESULT), ==,
                    PVDC_RESULT_APPLIED);
    g_assert_cmphex(rd(&t, PVDC_REG_INT_ACK), ==,
                    PVDC_INT(0, PVDC_INT_COMMIT_DONE));

    /* A group member amended keeps the group's (later) latch point. */
    t1 = enable_head(&t, 1, CLOCK_2MS);
    rd(&t, PVDC_REG_INT_ACK);
    wr(&t, PVDC_HEAD_SHADOW(0) + PVDC_HS_BACKGROUND, 0x333333);
    wr(&t, PVDC_REG_MULTI_DOORBELL, BIT(0) | BIT(1));
    wr(&t, PVDC_HEAD_SHADOW(0) + PVDC_HS_BACKGROUND, 0x444444);
    amend(&t, 0);
    step_to(&t, t1 + p1 - 1);
    g_assert_cmphex(rd(&t, PVDC_HEAD_ACTIVE(0) + PVDC_HS_BACKGROUND), ==,
                    0x222222);
    step_to(&t, t1 + p1);
    g_assert_cmphex(rd(&t, PVDC_HEAD_ACTIVE(0) + PVDC_HS_BACKGROUND), ==,
                    0x444444);
    g_assert_cmphex(rd(&t, PVDC_REG_INT_ACK), ==,
                    PVDC_INT(0, PVDC_INT_COMMIT_DONE) |
                    PVDC_INT(1, PVDC_INT_COMMIT_DONE));
    g_assert_cmpuint(head_ctl(&t, 0, PVDC_HEAD_DONE_SEQ), ==,
                     head_ctl(&t, 0, PVDC_HEAD_ARMED_SEQ));
    pvdc_test_stop(&t);
}

static void test_clock_reads_the_virtual_clock(void)
{
    const int64_t later = 5 * NANOSECONDS_PER_SECOND + 123;
    PVDCTest t;

    pvdc_test_start(&t, NULL);
    g_assert_cmphex(rd(&t, PVDC_REG_FEATURES) & PVDC_FEATURE_CLOCK, ==,
                    PVDC_FEATURE_CLOCK);
    g_assert_cmpuint(rd(&t, PVDC_REG_CLOCK_LO), ==, (uint32_t)now_ns(&t));
    g_assert_cmpuint(rd(&t, PVDC_REG_CLOCK_HI), ==, 0);
    step_to(&t, later);
    g_assert_cmpuint(rd(&t, PVDC_REG_CLOCK_HI), ==, later >> 32);
    g_assert_cmpuint(rd(&t, PVDC_REG_CLOCK_LO), ==, (uint32_t)later);
    /* Stateless: reading HI alone, or twice, changes nothing. */
    g_assert_cmpuint(rd(&t, PVDC_REG_CLOCK_HI), ==, later >> 32);
    pvdc_test_stop(&t);
}

static void test_reset_during_armed_commit(void)
{
    const uint64_t p0 = period_ns(CLOCK_1MS);
    uint64_t callbacks;
    PVDCTest t;
    int64_t t0;

    pvdc_test_start(&t, NULL);
    t0 = enable_head(&t, 0, CLOCK_1MS);
    wr(&t, PVDC_REG_INT_ENABLE, PVDC_INT(0, PVDC_INT_VBLANK));
    wr(&t, PVDC_HEAD_SHADOW(0) + PVDC_HS_BACKGROUND, 0x333333);
    doorbell(&t, 0);
    wr(&t, PVDC_HEAD_SHADOW(1) + PVDC_HS_CTRL, 0);
    step_to(&t, t0 + p0 / 2);

    qtest_system_reset(t.qts);
    pvdc_test_detach(&t);
    pvdc_test_attach(&t, t.qts);
    assert_reset_state(&t);

    callbacks = timer_callbacks(&t);
    step_to(&t, t0 + 20 * p0);
    assert_reset_state(&t);
    g_assert_cmpuint(timer_callbacks(&t), ==, callbacks);

    /* And the device works after it. */
    t0 = enable_head(&t, 0, CLOCK_1MS);
    g_assert_cmpuint(head_ctl(&t, 0, PVDC_HEAD_ARMED_SEQ), ==, 1);
    pvdc_test_stop(&t);
}

static void test_migration_with_armed_commit(void)
{
    const uint64_t p0 = period_ns(CLOCK_1MS);
    g_autofree char *dir = g_dir_make_tmp("pvdc-test-XXXXXX", NULL);
    g_autofree char *sock = g_strdup_printf("%s/migrate", dir);
    g_autofree char *uri = g_strdup_printf("unix:%s", sock);
    g_autofree char *incoming = g_strdup_printf("-incoming %s", uri);
    PVDCTest src, dst;
    Snapshot before, after;
    int64_t t0, when;

    pvdc_test_start(&src, NULL);
    t0 = enable_head(&src, 0, CLOCK_1MS);
    step_to(&src, t0 + 2 * p0 + p0 / 3);
    wr(&src, PVDC_HEAD_SHADOW(0) + PVDC_HS_BACKGROUND, 0x444444);
    write_plane(&src, plane_of(&src, 0, OVERLAY(0)), 0, 64 * KiB, 1);
    snapshot_active(&src, &before);
    doorbell(&src, 0);
    wr(&src, PVDC_HEAD_SHADOW(0) + PVDC_HS_BACKGROUND, 0x555555);
    when = now_ns(&src);

    dst.qts = pvdc_test_spawn(NULL, incoming);
    pvdc_migrate(src.qts, dst.qts, uri);
    /* The qtest clock is the test's: carry it over as a host would. */
    g_assert_cmpint(qtest_clock_set(dst.qts, when), ==, when);
    pvdc_test_attach(&dst, dst.qts);
    dst.now = when;

    assert_active_is(&dst, &before);
    g_assert_cmpuint(head_ctl(&dst, 0, PVDC_HEAD_DOORBELL), ==, 1);
    g_assert_cmpuint(head_ctl(&dst, 0, PVDC_HEAD_ARMED_SEQ), ==, 2);
    g_assert_cmphex(rd(&dst, PVDC_HEAD_SHADOW(0) + PVDC_HS_BACKGROUND), ==,
                    0x555555);
    step_to(&dst, t0 + 3 * p0 - 1);
    assert_active_is(&dst, &before);
    step_to(&dst, t0 + 3 * p0);
    snapshot_active(&dst, &after);
    g_assert_cmphex(after.head[0][PVDC_HS_BACKGROUND / 4], ==, 0x444444);
    g_assert_cmphex(after.plane[plane_of(&dst, 0, OVERLAY(0))]
                    [PVDC_PS_FB_OFFSET / 4], ==, 64 * KiB);
    g_assert_cmphex(head_ctl(&dst, 0, PVDC_HEAD_RESULT), ==,
                    PVDC_RESULT_APPLIED);
    g_assert_cmpuint(head_ctl(&dst, 0, PVDC_HEAD_VBLANK_COUNT), ==, 3);
    g_assert_cmphex(rd(&dst, PVDC_REG_INT_STATUS), ==,
                    PVDC_INT(0, PVDC_INT_COMMIT_DONE));

    pvdc_test_stop(&dst);
    pvdc_test_stop(&src);
    unlink(sock);
    rmdir(dir);
}

/* ------------------------------------------------------------------------ */
/* Hostile values                                                           */
/* ------------------------------------------------------------------------ */

static void test_hostile_values_are_refused(void)
{
    static const struct {
        uint32_t reg, val;
        uint32_t code;
    } plane_cases[] = {
        /* 32-bit wrap of offset + pitch * (height - 1) */
        { PVDC_PS_FB_OFFSET, 0xffffffc0, PVDC_ERR_FB_BOUNDS },
        { PVDC_PS_FB_PITCH, 0x40000000, PVDC_ERR_FB_BOUNDS },
        { PVDC_PS_FB_PITCH, 0xffffffc0, PVDC_ERR_FB_BOUNDS },
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
    Snapshot before;
    PVDCTest t;
    int i;

    pvdc_test_start(&t, NULL);
    primary = plane_of(&t, 0, PRIMARY);
    enable_head(&t, 0, CLOCK_1MS);
    snapshot_active(&t, &before);

    for (i = 0; i < ARRAY_SIZE(plane_cases); i++) {
        uint32_t good = rd(&t, PVDC_PLANE_SHADOW(primary) + plane_cases[i].reg);

        wr_plane(&t, primary, plane_cases[i].reg, plane_cases[i].val);
        doorbell(&t, 0);
        g_assert_cmphex(wait_outcome(&t, 0, 2 * SCALE_MS), ==,
                        result_of(plane_cases[i].code, primary));
        assert_active_is(&t, &before);
        wr_plane(&t, primary, plane_cases[i].reg, good);
    }

    for (i = 0; i < ARRAY_SIZE(mode_cases); i++) {
        write_mode(&t, 1, CLOCK_1MS);
        wr(&t, PVDC_HEAD_SHADOW(1) + mode_cases[i].reg, mode_cases[i].val);
        doorbell(&t, 1);
        g_assert_cmphex(wait_outcome(&t, 1, 0), ==,
                        head_result(PVDC_ERR_MODE));
        assert_active_is(&t, &before);
        g_assert_cmpuint(head_ctl(&t, 1, PVDC_HEAD_FRAME_PERIOD), ==, 0);
    }

    /* The slowest mode there is still has a frame period and vblanks. */
    write_mode(&t, 1, CLOCK_1MS);
    wr(&t, PVDC_HEAD_SHADOW(1) + PVDC_HS_HTIMING, PVDC_XY(MODE_W, 0xffff));
    wr(&t, PVDC_HEAD_SHADOW(1) + PVDC_HS_VTIMING, PVDC_XY(MODE_H, 0xffff));
    wr(&t, PVDC_HEAD_SHADOW(1) + PVDC_HS_PIXEL_CLOCK, 1);
    doorbell(&t, 1);
    g_assert_cmphex(wait_outcome(&t, 1, 0), ==, PVDC_RESULT_APPLIED);
    g_assert_cmphex(head_ctl(&t, 1, PVDC_HEAD_FRAME_PERIOD), ==, UINT32_MAX);

    /* Garbage everywhere in BAR0: still the same device. */
    for (uint32_t addr = 0; addr < PVDC_MMIO_SIZE; addr += 4) {
        if (addr == PVDC_REG_MULTI_DOORBELL ||
            (addr >= PVDC_HEAD_CONTROL_BASE &&
             addr < PVDC_HEAD_SHADOW_BASE &&
             (addr % PVDC_HEAD_STRIDE) == PVDC_HEAD_DOORBELL)) {
            continue;
        }
        if (addr % 64 == 0 || addr >= PVDC_EDID_BASE) {
            wr(&t, addr, 0xffffffff);
        }
    }
    g_assert_cmphex(rd(&t, PVDC_REG_ID), ==, PVDC_ID);
    g_assert_cmpuint(rd(&t, PVDC_REG_NUM_HEADS), ==, t.heads);
    pvdc_test_stop(&t);
}

/* ------------------------------------------------------------------------ */
/* Randomised: the active state is only ever a valid armed state           */
/* ------------------------------------------------------------------------ */

/*
 * A reference model written from the design notes, sharing no code with the
 * device: registers are kept as arrays indexed by offset / 4, and the rules
 * are checked in the documented order.
 */
#define HS(reg)     ((reg) / 4)
#define PS(reg)     ((reg) / 4)
#define R_HEAD_NONE PVDC_RESULT_PLANE_NONE

typedef struct Model {
    unsigned int heads, overlays, planes, scalers;
    uint32_t max_w, max_h, bandwidth_total;
    uint64_t vram;
    uint32_t fmt_table[PVDC_MAX_FORMATS];
    uint32_t fmt_mask[3];

    uint32_t hs[PVDC_MAX_HEADS][PVDC_HEAD_STATE_REGS];
    uint32_t ha[PVDC_MAX_HEADS][PVDC_HEAD_STATE_REGS];
    uint32_t harm[PVDC_MAX_HEADS][PVDC_HEAD_STATE_REGS];
    uint32_t ps[PVDC_MAX_PLANES][PVDC_PLANE_STATE_REGS];
    uint32_t pa[PVDC_MAX_PLANES][PVDC_PLANE_STATE_REGS];
    bool carried[PVDC_MAX_HEADS][PVDC_MAX_PLANES];
    uint32_t parm[PVDC_MAX_HEADS][PVDC_MAX_PLANES][PVDC_PLANE_STATE_REGS];
    uint32_t armed;
    uint32_t group[PVDC_MAX_HEADS];
    uint32_t seq[PVDC_MAX_HEADS];

    unsigned int applied, rejected;
    unsigned int errors[PVDC_RESULT_CODE_MASK + 1];
} Model;

typedef struct ModelView {
    const uint32_t *h[PVDC_MAX_HEADS];
    const uint32_t *p[PVDC_MAX_PLANES];
    int by[PVDC_MAX_PLANES];
} ModelView;

static unsigned int model_cpp(Model *m, uint32_t fourcc)
{
    return fourcc == PVDC_FMT_RGB565 || fourcc == PVDC_FMT_YUYV ? 2 : 4;
}

static int model_type(Model *m, unsigned int plane)
{
    unsigned int i = plane % (m->overlays + 2);

    return i == 0 ? PVDC_PLANE_TYPE_PRIMARY :
           i == m->overlays + 1 ? PVDC_PLANE_TYPE_CURSOR :
           PVDC_PLANE_TYPE_OVERLAY;
}

static bool model_format_ok(Model *m, unsigned int plane, uint32_t fourcc)
{
    for (int i = 0; i < PVDC_MAX_FORMATS; i++) {
        if (m->fmt_table[i] && m->fmt_table[i] == fourcc) {
            return m->fmt_mask[model_type(m, plane)] & BIT(i);
        }
    }
    return false;
}

static bool model_on(const uint32_t *regs)
{
    return regs[0] & 1;
}

static bool model_scaled(const uint32_t *p)
{
    return (uint64_t)p[PS(PVDC_PS_SRC_W)] !=
           (uint64_t)PVDC_X(p[PS(PVDC_PS_DST_SIZE)]) * 65536 ||
           (uint64_t)p[PS(PVDC_PS_SRC_H)] !=
           (uint64_t)PVDC_Y(p[PS(PVDC_PS_DST_SIZE)]) * 65536;
}

static bool model_axis_bad(uint32_t timing, uint32_t sync, uint32_t max)
{
    uint32_t active = PVDC_X(timing), total = PVDC_Y(timing);
    uint32_t start = PVDC_X(sync), end = PVDC_Y(sync);

    return !(active > 0 && active <= max && start >= active && end >= start &&
             total >= end);
}

static uint32_t model_check_plane(Model *m, ModelView *v, unsigned int h,
                                  unsigned int p)
{
    const uint32_t *r = v->p[p];
    uint32_t ctrl = r[PS(PVDC_PS_CTRL)];
    uint32_t w = PVDC_X(r[PS(PVDC_PS_FB_SIZE)]);
    uint32_t hh = PVDC_Y(r[PS(PVDC_PS_FB_SIZE)]);
    uint32_t dw = PVDC_X(r[PS(PVDC_PS_DST_SIZE)]);
    uint32_t dh = PVDC_Y(r[PS(PVDC_PS_DST_SIZE)]);
    int dx = (int16_t)PVDC_X(r[PS(PVDC_PS_DST_POS)]);
    int dy = (int16_t)PVDC_Y(r[PS(PVDC_PS_DST_POS)]);
    uint64_t sw = r[PS(PVDC_PS_SRC_W)], sh = r[PS(PVDC_PS_SRC_H)];
    uint32_t fourcc = r[PS(PVDC_PS_FORMAT)];
    uint32_t pitch = r[PS(PVDC_PS_FB_PITCH)];
    uint64_t line;
    int type = model_type(m, p);
    unsigned int home = p / (m->overlays + 2);

    if ((ctrl & ~PVDC_PS_CTRL_VALID_MASK) ||
        ((ctrl >> PVDC_PS_CTRL_BLEND_SHIFT) & 3) == 3 ||
        (type == PVDC_PLANE_TYPE_CURSOR &&
         (ctrl & (PVDC_PS_CTRL_ROTATE_180 | PVDC_PS_CTRL_REFLECT_X |
                  PVDC_PS_CTRL_REFLECT_Y | PVDC_PS_CTRL_FILTER_BILINEAR)))) {
        return PVDC_ERR_PLANE_CTRL;
    }
    if (r[PS(PVDC_PS_HEAD)] >= m->heads ||
        (type != PVDC_PLANE_TYPE_OVERLAY && r[PS(PVDC_PS_HEAD)] != home)) {
        return PVDC_ERR_PLANE_HEAD;
    }
    if (model_on(m->pa[p]) && m->pa[p][PS(PVDC_PS_HEAD)] != h) {
        return PVDC_ERR_PLANE_BUSY;
    }
    if (!model_on(v->h[h])) {
        return PVDC_ERR_HEAD_DISABLED;
    }
    if (!model_format_ok(m, p, fourcc)) {
        return PVDC_ERR_FORMAT;
    }
    if (w == 0 || hh == 0 || w > m->max_w || hh > m->max_h ||
        (fourcc == PVDC_FMT_YUYV && w % 2)) {
        return PVDC_ERR_FB_SIZE;
    }
    line = (uint64_t)w * model_cpp(m, fourcc);
    if (pitch < line || pitch % 64) {
        return PVDC_ERR_PITCH;
    }
    if (r[PS(PVDC_PS_FB_OFFSET)] % 64) {
        return PVDC_ERR_OFFSET_ALIGN;
    }
    if (r[PS(PVDC_PS_FB_OFFSET)] + (uint64_t)pitch * (hh - 1) + line >
        m->vram) {
        return PVDC_ERR_FB_BOUNDS;
    }
    if (sw == 0 || sh == 0 ||
        r[PS(PVDC_PS_SRC_X)] + sw > (uint64_t)w * 65536 ||
        r[PS(PVDC_PS_SRC_Y)] + sh > (uint64_t)hh * 65536) {
        return PVDC_ERR_SRC_RECT;
    }
    if (dw == 0 || dh == 0 || dw > m->max_w || dh > m->max_h ||
        abs(dx) > (int)m->max_w || abs(dy) > (int)m->max_h) {
        return PVDC_ERR_DST_RECT;
    }
    if (type == PVDC_PLANE_TYPE_CURSOR &&
        (dw > 256 || dh > 256 || model_scaled(r))) {
        return PVDC_ERR_CURSOR;
    }
    if (sw > 4 * (uint64_t)dw * 65536 || (uint64_t)dw * 65536 > 8 * sw ||
        sh > 4 * (uint64_t)dh * 65536 || (uint64_t)dh * 65536 > 8 * sh) {
        return PVDC_ERR_SCALE_RATIO;
    }
    if (r[PS(PVDC_PS_ZPOS)] >= m->overlays + 2) {
        return PVDC_ERR_ZPOS;
    }
    for (unsigned int q = 0; q < m->planes; q++) {
        if (q != p && model_on(v->p[q]) && v->p[q][PS(PVDC_PS_HEAD)] == h &&
            v->p[q][PS(PVDC_PS_ZPOS)] == r[PS(PVDC_PS_ZPOS)]) {
            return PVDC_ERR_ZPOS;
        }
    }
    return 0;
}

static uint32_t model_check_head(Model *m, ModelView *v, unsigned int h)
{
    const uint32_t *a = v->h[h], *old = m->ha[h];
    uint64_t bandwidth = 0, scaled = 0;
    uint32_t err;
    unsigned int p;

    if (a[HS(PVDC_HS_CTRL)] & ~1u) {
        return head_result(PVDC_ERR_HEAD_RESERVED);
    }
    if (model_on(a)) {
        uint64_t pixels = (uint64_t)PVDC_Y(a[HS(PVDC_HS_HTIMING)]) *
                          PVDC_Y(a[HS(PVDC_HS_VTIMING)]);
        uint32_t clock = a[HS(PVDC_HS_PIXEL_CLOCK)];
        uint64_t total = 0;

        if (model_axis_bad(a[HS(PVDC_HS_HTIMING)], a[HS(PVDC_HS_HSYNC)],
                           m->max_w) ||
            model_axis_bad(a[HS(PVDC_HS_VTIMING)], a[HS(PVDC_HS_VSYNC)],
                           m->max_h) ||
            clock == 0 || clock > PVDC_MAX_PIXEL_CLOCK_KHZ ||
            pixels * 1000000 / clock == 0) {
            return head_result(PVDC_ERR_MODE);
        }
        if (model_on(old) &&
            memcmp(&a[HS(PVDC_HS_HTIMING)], &old[HS(PVDC_HS_HTIMING)],
                   (HS(PVDC_HS_PIXEL_CLOCK) - HS(PVDC_HS_HTIMING) + 1) *
                   sizeof(uint32_t))) {
            return head_result(PVDC_ERR_MODESET_REQUIRED);
        }
        if (model_on(old) &&
            a[HS(PVDC_HS_BANDWIDTH)] != old[HS(PVDC_HS_BANDWIDTH)]) {
            return head_result(PVDC_ERR_BANDWIDTH_CHANGE);
        }
        for (unsigned int k = 0; k < m->heads; k++) {
            total += model_on(v->h[k]) ? v->h[k][HS(PVDC_HS_BANDWIDTH)] : 0;
        }
        if (total > m->bandwidth_total) {
            return head_result(PVDC_ERR_BANDWIDTH_ALLOC);
        }
    }
    for (p = 0; p < m->planes; p++) {
        if (!model_on(v->p[p])) {
            continue;
        }
        if (v->by[p] == (int)h) {
            err = model_check_plane(m, v, h, p);
            if (err) {
                return result_of(err, p);
            }
        } else if (v->by[p] < 0 && v->p[p][PS(PVDC_PS_HEAD)] == h &&
                   !model_on(a)) {
            return result_of(PVDC_ERR_HEAD_DISABLED, p);
        }
    }
    for (p = 0; p < m->planes; p++) {
        if (model_on(v->p[p]) && model_scaled(v->p[p]) &&
            ++scaled > m->scalers) {
            return result_of(PVDC_ERR_SCALERS, p);
        }
    }
    for (p = 0; p < m->planes; p++) {
        const uint32_t *r = v->p[p];

        if (model_on(r) && r[PS(PVDC_PS_HEAD)] == h) {
            uint64_t w = DIV_ROUND_UP((uint64_t)r[PS(PVDC_PS_SRC_W)], 65536);
            uint64_t hh = DIV_ROUND_UP((uint64_t)r[PS(PVDC_PS_SRC_H)], 65536);

            bandwidth += DIV_ROUND_UP(w * hh *
                                      model_cpp(m, r[PS(PVDC_PS_FORMAT)]),
                                      1024);
        }
    }
    if (bandwidth > a[HS(PVDC_HS_BANDWIDTH)]) {
        return head_result(PVDC_ERR_BANDWIDTH);
    }
    return 0;
}

/* Latch the group of @first; fills @result for each member. */
static void model_latch(Model *m, uint32_t group,
                        uint32_t result[PVDC_MAX_HEADS])
{
    ModelView v;
    unsigned int h, p, failed = 0;
    uint32_t err = 0;

    for (h = 0; h < m->heads; h++) {
        v.h[h] = group & BIT(h) ? m->harm[h] : m->ha[h];
    }
    for (p = 0; p < m->planes; p++) {
        v.p[p] = m->pa[p];
        v.by[p] = -1;
        for (h = 0; h < m->heads; h++) {
            if ((group & BIT(h)) && m->carried[h][p]) {
                v.p[p] = m->parm[h][p];
                v.by[p] = h;
            }
        }
    }
    for (h = 0; h < m->heads && !err; h++) {
        if (group & BIT(h)) {
            err = model_check_head(m, &v, h);
            failed = h;
        }
    }
    if (!err) {
        for (p = 0; p < m->planes; p++) {
            if (v.by[p] >= 0) {
                memcpy(m->pa[p], v.p[p], sizeof(m->pa[p]));
            }
        }
    }
    for (h = 0; h < m->heads; h++) {
        if (!(group & BIT(h))) {
            continue;
        }
        if (!err) {
            memcpy(m->ha[h], m->harm[h], sizeof(m->ha[h]));
            result[h] = PVDC_RESULT_APPLIED;
        } else {
            result[h] = h == failed ? err : head_result(PVDC_ERR_GROUP);
        }
        m->armed &= ~BIT(h);
    }
    if (err) {
        m->rejected++;
        m->errors[err & PVDC_RESULT_CODE_MASK]++;
    } else {
        m->applied++;
    }
}

static void model_doorbell(Model *m, uint32_t mask)
{
    if (m->armed & mask) {
        return;
    }
    for (unsigned int h = 0; h < m->heads; h++) {
        if (!(mask & BIT(h))) {
            continue;
        }
        memcpy(m->harm[h], m->hs[h], sizeof(m->harm[h]));
        for (unsigned int p = 0; p < m->planes; p++) {
            m->carried[h][p] = m->ps[p][PS(PVDC_PS_HEAD)] == h;
            memcpy(m->parm[h][p], m->ps[p], sizeof(m->parm[h][p]));
        }
        m->group[h] = mask;
        m->seq[h]++;
    }
    m->armed |= mask;
}

static void model_init(Model *m, PVDCTest *t)
{
    memset(m, 0, sizeof(*m));
    m->heads = t->heads;
    m->overlays = t->overlays;
    m->planes = t->planes;
    m->scalers = rd(t, PVDC_REG_NUM_SCALERS);
    m->max_w = PVDC_X(rd(t, PVDC_REG_MAX_SIZE));
    m->max_h = PVDC_Y(rd(t, PVDC_REG_MAX_SIZE));
    m->bandwidth_total = rd(t, PVDC_REG_BANDWIDTH_TOTAL);
    m->vram = t->vram_size;
    for (int i = 0; i < PVDC_MAX_FORMATS; i++) {
        m->fmt_table[i] = rd(t, PVDC_REG_FORMAT_TABLE(i));
    }
    m->fmt_mask[PVDC_PLANE_TYPE_PRIMARY] = rd(t, PVDC_REG_FORMATS_PRIMARY);
    m->fmt_mask[PVDC_PLANE_TYPE_OVERLAY] = rd(t, PVDC_REG_FORMATS_OVERLAY);
    m->fmt_mask[PVDC_PLANE_TYPE_CURSOR] = rd(t, PVDC_REG_FORMATS_CURSOR);
    for (unsigned int h = 0; h < m->heads; h++) {
        m->hs[h][HS(PVDC_HS_BANDWIDTH)] = m->bandwidth_total / m->heads;
        m->ha[h][HS(PVDC_HS_BANDWIDTH)] = m->bandwidth_total / m->heads;
    }
    for (unsigned int p = 0; p < m->planes; p++) {
        m->ps[p][PS(PVDC_PS_HEAD)] = m->pa[p][PS(PVDC_PS_HEAD)] =
            p / (m->overlays + 2);
        m->ps[p][PS(PVDC_PS_ALPHA)] = m->pa[p][PS(PVDC_PS_ALPHA)] = 0xffff;
    }
}

/* Mirror a register write in the model (the device decodes it itself). */
static void model_write(Model *m, uint32_t addr, uint32_t val)
{
    uint32_t all = MAKE_64BIT_MASK(0, m->heads);

    if (addr >= PVDC_HEAD_SHADOW_BASE &&
        addr < PVDC_HEAD_SHADOW(m->heads) &&
        addr % PVDC_HEAD_STRIDE < PVDC_HEAD_STATE_REGS * 4) {
        m->hs[(addr - PVDC_HEAD_SHADOW_BASE) / PVDC_HEAD_STRIDE]
             [addr % PVDC_HEAD_STRIDE / 4] = val;
    } else if (addr >= PVDC_PLANE_SHADOW_BASE &&
               addr < PVDC_PLANE_SHADOW(m->planes) &&
               addr % PVDC_PLANE_STRIDE < PVDC_PLANE_STATE_REGS * 4) {
        m->ps[(addr - PVDC_PLANE_SHADOW_BASE) / PVDC_PLANE_STRIDE]
             [addr % PVDC_PLANE_STRIDE / 4] = val;
    } else if (addr >= PVDC_HEAD_CONTROL_BASE &&
               addr < PVDC_HEAD_CONTROL(m->heads) &&
               addr % PVDC_HEAD_STRIDE == PVDC_HEAD_DOORBELL && val == 1) {
        model_doorbell(m, BIT((addr - PVDC_HEAD_CONTROL_BASE) /
                              PVDC_HEAD_STRIDE));
    } else if (addr == PVDC_REG_MULTI_DOORBELL && val && !(val & ~all)) {
        model_doorbell(m, val);
    }
}

/*
 * Write a consistent, mostly valid state for plane @p, so
 * that a good share of the random commits pass.
 */
static void random_plane(GRand *rng, Model *m, PVDCTest *t, unsigned int p)
{
    static const uint32_t overlay_formats[] = {
        PVDC_FMT_XRGB8888, PVDC_FMT_RGB565, PVDC_FMT_YUYV,
    };
    int type = model_type(m, p);
    uint32_t fourcc = type == PVDC_PLANE_TYPE_CURSOR ? PVDC_FMT_ARGB8888 :
                      type == PVDC_PLANE_TYPE_PRIMARY ? PVDC_FMT_XRGB8888 :
                      overlay_formats[g_rand_int_range(rng, 0, 3)];
    uint32_t w = 8 * g_rand_int_range(rng, 1, 9);
    uint32_t h = 8 * g_rand_int_range(rng, 1, 7);
    uint32_t cpp = model_cpp(m, fourcc);
    uint32_t sw = g_rand_int_range(rng, 1, w + 1);
    uint32_t sh = g_rand_int_range(rng, 1, h + 1);
    bool unscaled = type == PVDC_PLANE_TYPE_CURSOR ||
                    g_rand_int_range(rng, 0, 4);
    uint32_t regs[PVDC_PLANE_STATE_REGS] = {
        [PS(PVDC_PS_CTRL)] = PVDC_PS_CTRL_ENABLE,
        [PS(PVDC_PS_HEAD)] = type == PVDC_PLANE_TYPE_OVERLAY ?
                             g_rand_int_range(rng, 0, m->heads) :
                             p / (m->overlays + 2),
        [PS(PVDC_PS_FORMAT)] = fourcc,
        [PS(PVDC_PS_FB_OFFSET)] = 64 * g_rand_int_range(rng, 0, 4096),
        [PS(PVDC_PS_FB_PITCH)] = ROUND_UP(w * cpp, 64) +
                                 64 * g_rand_int_range(rng, 0, 2),
        [PS(PVDC_PS_FB_SIZE)] = PVDC_XY(w, h),
        [PS(PVDC_PS_SRC_X)] = FP16(w - sw),
        [PS(PVDC_PS_SRC_Y)] = FP16(h - sh),
        [PS(PVDC_PS_SRC_W)] = FP16(sw),
        [PS(PVDC_PS_SRC_H)] = FP16(sh),
        [PS(PVDC_PS_DST_POS)] = PVDC_XY(g_rand_int_range(rng, -70, 70),
                                        g_rand_int_range(rng, -50, 50)),
        [PS(PVDC_PS_DST_SIZE)] = unscaled ? PVDC_XY(sw, sh) :
                                 PVDC_XY(2 * sw, sh),
        [PS(PVDC_PS_ZPOS)] = g_rand_int_range(rng, 0, m->overlays + 2),
        [PS(PVDC_PS_ALPHA)] = g_rand_int(rng) & 0xffff,
    };

    for (unsigned int r = 0; r < PVDC_PLANE_STATE_REGS; r++) {
        wr(t, PVDC_PLANE_SHADOW(p) + r * 4, regs[r]);
        model_write(m, PVDC_PLANE_SHADOW(p) + r * 4, regs[r]);
    }
}

/* A mostly valid value for a register, sometimes anything at all. */
static uint32_t random_value(GRand *rng, Model *m, bool head, uint32_t reg,
                             unsigned int index, bool clean)
{
    static const uint32_t formats[] = {
        PVDC_FMT_XRGB8888, PVDC_FMT_ARGB8888, PVDC_FMT_RGB565,
        PVDC_FMT_YUYV, PVDC_FMT_XRGB2101010,
    };
    uint32_t w = 16 * g_rand_int_range(rng, 1, 5);
    uint32_t h = 8 * g_rand_int_range(rng, 1, 7);

    if (!clean && g_rand_int_range(rng, 0, 20) == 0) {
        return g_rand_int(rng);
    }
    if (head) {
        switch (reg) {
        case PVDC_HS_CTRL:
            return g_rand_int_range(rng, 0, 6) ? PVDC_HS_CTRL_ENABLE : 0;
        case PVDC_HS_HTIMING:
            return PVDC_XY(MODE_W, MODE_HTOTAL);
        case PVDC_HS_HSYNC:
            return PVDC_XY(MODE_W + 2, MODE_W + 6);
        case PVDC_HS_VTIMING:
            return PVDC_XY(MODE_H, MODE_VTOTAL);
        case PVDC_HS_VSYNC:
            return PVDC_XY(MODE_H + 1, MODE_H + 2);
        case PVDC_HS_PIXEL_CLOCK:
            return g_rand_boolean(rng) ? CLOCK_1MS : CLOCK_2MS;
        case PVDC_HS_BANDWIDTH:
            return g_rand_int_range(rng, 0, 4) ? m->bandwidth_total / m->heads :
                   g_rand_int_range(rng, 0, m->bandwidth_total / m->heads);
        default:
            return g_rand_int(rng) & 0xffffff;
        }
    }
    switch (reg) {
    case PVDC_PS_CTRL:
        return g_rand_int_range(rng, 0, 4) ? PVDC_PS_CTRL_ENABLE :
               g_rand_int(rng) & PVDC_PS_CTRL_VALID_MASK;
    case PVDC_PS_HEAD:
        return g_rand_int_range(rng, 0, 4) ? index / (m->overlays + 2) :
               g_rand_int_range(rng, 0, m->heads + 1);
    case PVDC_PS_FORMAT:
        return formats[g_rand_int_range(rng, 0, ARRAY_SIZE(formats))];
    case PVDC_PS_FB_OFFSET:
        return 64 * g_rand_int_range(rng, 0, 1024);
    case PVDC_PS_FB_PITCH:
        return 64 * g_rand_int_range(rng, 1, 5);
    case PVDC_PS_FB_SIZE:
    case PVDC_PS_DST_SIZE:
        return PVDC_XY(w, h);
    case PVDC_PS_SRC_X:
    case PVDC_PS_SRC_Y:
        return g_rand_int_range(rng, 0, 3) ? 0 : FP16(8);
    case PVDC_PS_SRC_W:
        return FP16(w);
    case PVDC_PS_SRC_H:
        return FP16(h);
    case PVDC_PS_DST_POS:
        return PVDC_XY(g_rand_int_range(rng, -70, 70),
                       g_rand_int_range(rng, -50, 50));
    case PVDC_PS_ZPOS:
        return g_rand_int_range(rng, 0, m->overlays + 3);
    default:
        return g_rand_int(rng) & 0xffff;
    }
}

static void model_compare(Model *m, PVDCTest *t)
{
    Snapshot dev, model;

    memset(&model, 0, sizeof(model));
    memcpy(model.head, m->ha, sizeof(m->ha));
    memcpy(model.plane, m->pa, sizeof(m->pa));
    snapshot_active(t, &dev);
    g_assert(memcmp(&dev, &model, sizeof(dev)) == 0);
}

/* After each step, latch in the model what the device latched. */
static void model_sync(Model *m, PVDCTest *t)
{
    uint32_t done = m->armed & ~rd(t, PVDC_REG_MULTI_DOORBELL);
    uint32_t result[PVDC_MAX_HEADS];
    unsigned int h;

    if (!done) {
        return;
    }
    /* Groups latched at one instant go in order of their lowest head. */
    for (h = 0; h < m->heads; h++) {
        if (done & BIT(h) && m->armed & BIT(h)) {
            g_assert_cmphex(m->group[h] & ~done, ==, 0);
            model_latch(m, m->group[h], result);
        }
    }
    for (h = 0; h < m->heads; h++) {
        if (done & BIT(h)) {
            g_assert_cmpuint(head_ctl(t, h, PVDC_HEAD_DONE_SEQ), ==,
                             m->seq[h]);
            g_assert_cmphex(head_ctl(t, h, PVDC_HEAD_RESULT), ==, result[h]);
        }
    }
    model_compare(m, t);
}

static void test_random_commits_match_reference_model(void)
{
    GRand *rng = g_rand_new_with_seed(20260101);
    unsigned int i, steps = g_test_slow() ? 40000 : 6000;
    PVDCTest t;
    Model m;

    pvdc_test_start(&t, "heads=3,overlays=1,scalers=1,vram-size=16M,"
                    "max-width=128,max-height=96,bandwidth-kib=60");
    model_init(&m, &t);

    for (i = 0; i < steps; i++) {
        unsigned int op = g_rand_int_range(rng, 0, 100);
        uint32_t addr, val;

        if (op < 15) {
            random_plane(rng, &m, &t, g_rand_int_range(rng, 0, m.planes));
            model_sync(&m, &t);
            continue;
        } else if (op < 20) {
            unsigned int h = g_rand_int_range(rng, 0, m.heads);

            for (uint32_t r = 0; r < PVDC_HEAD_STATE_REGS; r++) {
                addr = PVDC_HEAD_SHADOW(h) + r * 4;
                val = random_value(rng, &m, true, r * 4, h, true);
                wr(&t, addr, val);
                model_write(&m, addr, val);
            }
            continue;
        } else if (op < 24) {
            /* what a driver does to turn a head off */
            unsigned int h = g_rand_int_range(rng, 0, m.heads);

            addr = PVDC_HEAD_SHADOW(h) + PVDC_HS_CTRL;
            wr(&t, addr, 0);
            model_write(&m, addr, 0);
            for (unsigned int p = 0; p < m.planes; p++) {
                if (m.ps[p][PS(PVDC_PS_HEAD)] == h) {
                    addr = PVDC_PLANE_SHADOW(p) + PVDC_PS_CTRL;
                    wr(&t, addr, 0);
                    model_write(&m, addr, 0);
                }
            }
            continue;
        } else if (op < 60) {
            bool head = g_rand_int_range(rng, 0, 4) == 0;
            unsigned int n = head ? g_rand_int_range(rng, 0, m.heads)
                                  : g_rand_int_range(rng, 0, m.planes);
            uint32_t reg = 4 * (head ?
                                g_rand_int_range(rng, 0,
                                                 PVDC_HEAD_STATE_REGS) :
                                g_rand_int_range(rng, 0,
                                                 PVDC_PLANE_STATE_REGS));

            addr = head ? PVDC_HEAD_SHADOW(n) + reg
                        : PVDC_PLANE_SHADOW(n) + reg;
            val = random_value(rng, &m, head, reg, n, false);
        } else if (op < 72) {
            addr = PVDC_HEAD_CONTROL(g_rand_int_range(rng, 0, m.heads)) +
                   PVDC_HEAD_DOORBELL;
            val = g_rand_int_range(rng, 0, 8) ? 1 : g_rand_int(rng);
        } else if (op < 76) {
            addr = PVDC_REG_MULTI_DOORBELL;
            val = g_rand_int_range(rng, 0, 1 << (m.heads + 1));
        } else if (op < 80) {
            /* anywhere, including read-only and unknown registers */
            addr = g_rand_int_range(rng, 0, PVDC_MMIO_SIZE / 4) * 4;
            val = g_rand_int(rng);
        } else {
            if (m.armed) {
                step_next(&t);
            } else {
                step_to(&t, t.now + g_rand_int_range(rng, 1, 3000000));
            }
            model_sync(&m, &t);
            continue;
        }
        if (addr == PVDC_REG_INT_ENABLE) {
            continue;
        }
        wr(&t, addr, val);
        model_write(&m, addr, val);
        model_sync(&m, &t);
        /* Between latches, nothing may change either. */
        if (i % 64 == 0) {
            model_compare(&m, &t);
        }
    }
    g_test_message("%u commits applied, %u rejected", m.applied, m.rejected);
    for (i = 0; i <= PVDC_RESULT_CODE_MASK; i++) {
        if (m.errors[i]) {
            g_test_message("  error 0x%02x: %u", i, m.errors[i]);
        }
    }
    g_assert_cmpuint(m.applied, >, steps / 50);
    g_assert_cmpuint(m.rejected, >, steps / 50);
    g_rand_free(rng);
    pvdc_test_stop(&t);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);

    qtest_add_func("/pvdc/pci/identity", test_pci_identity);
    qtest_add_func("/pvdc/caps/follow-properties",
                   test_capabilities_follow_properties);
    qtest_add_func("/pvdc/caps/fixed-limits-match-the-design",
                   test_fixed_capabilities_match_the_design);
    qtest_add_func("/pvdc/properties/invalid-values-fail-realize",
                   test_invalid_properties_fail_realize);
    for (int i = 0; i < ARRAY_SIZE(invalid_props); i++) {
        g_autofree char *path =
            g_strdup_printf("/pvdc/properties/invalid/subprocess/%d", i);

        qtest_add_data_func(path, &invalid_props[i],
                            test_invalid_property_subprocess);
    }
    qtest_add_func("/pvdc/reset/values-follow-the-design", test_reset_values);
    qtest_add_func("/pvdc/edid/describes-the-preferred-mode",
                   test_edid_and_connector);
    qtest_add_func("/pvdc/vram/bar-is-memory", test_vram_bar_is_memory);

    qtest_add_func("/pvdc/commit/shadow-writes-without-doorbell-change-nothing",
                   test_shadow_writes_without_doorbell_change_nothing);
    qtest_add_func("/pvdc/commit/applies-exactly-at-the-next-vblank",
                   test_commit_applies_exactly_at_next_vblank);
    qtest_add_func("/pvdc/commit/active-windows-ignore-writes",
                   test_writes_to_active_windows_are_ignored);
    qtest_add_func("/pvdc/commit/disabled-head-latches-at-once",
                   test_disabled_head_commit_latches_at_once);

    for (int i = 0; i < ARRAY_SIZE(rule_cases); i++) {
        g_autofree char *path =
            g_strdup_printf("/pvdc/rules/%s-is-rejected", rule_cases[i].name);

        qtest_add_data_func(path, &rule_cases[i], test_rule);
    }
    qtest_add_func("/pvdc/rules/first-broken-rule-in-order-is-reported",
                   test_first_broken_rule_is_reported);
    qtest_add_func("/pvdc/rules/zpos-clash-with-plane-outside-commit"
                   "-is-rejected",
                   test_zpos_clash_with_plane_outside_commit);

    qtest_add_func("/pvdc/heads/are-independent-at-different-refresh-rates",
                   test_heads_are_independent);
    qtest_add_func("/pvdc/heads/multi-head-commit-is-all-or-none",
                   test_multi_head_commit_is_all_or_none);
    qtest_add_func("/pvdc/modeset/timings-change-only-through-disable-enable",
                   test_timings_change_only_through_disable_enable);
    qtest_add_func("/pvdc/modeset/link-up-delay-is-respected",
                   test_link_up_delay_is_respected);

    qtest_add_func("/pvdc/vblank/counter-and-timestamp-are-exact",
                   test_vblank_counter_and_timestamp_are_exact);
    qtest_add_func("/pvdc/vblank/no-timer-callbacks-while-idle",
                   test_no_timer_callbacks_while_idle);
    qtest_add_func("/pvdc/statistics/count-writes-and-commit-outcomes",
                   test_statistics_count_writes_and_commit_outcomes);

    qtest_add_func("/pvdc/irq/status-enable-and-ack-drive-intx",
                   test_interrupt_status_enable_and_ack);
    qtest_add_func("/pvdc/irq/msi-replaces-intx", test_msi_replaces_intx);
    qtest_add_func("/pvdc/irq/msi-aimed-at-own-registers-is-harmless",
                   test_msi_into_own_registers_is_harmless);

    qtest_add_func("/pvdc/crc/follows-the-active-frame",
                   test_crc_follows_the_active_frame);
    qtest_add_func("/pvdc/connector/change-raises-hotplug",
                   test_connector_change_raises_hotplug);
    qtest_add_func("/pvdc/doorbell/overrun-keeps-the-armed-commit",
                   test_doorbell_overrun_keeps_the_armed_commit);
    qtest_add_func("/pvdc/doorbell/amend-joins-the-armed-commit",
                   test_amend_joins_the_armed_commit);
    qtest_add_func("/pvdc/clock/reads-the-virtual-clock",
                   test_clock_reads_the_virtual_clock);
    qtest_add_func("/pvdc/reset/during-an-armed-commit-cancels-it",
                   test_reset_during_armed_commit);
    qtest_add_func("/pvdc/migration/armed-commit-applies-at-its-vblank",
                   test_migration_with_armed_commit);
    qtest_add_func("/pvdc/hostile/values-are-refused-device-stays-responsive",
                   test_hostile_values_are_refused);
    qtest_add_func("/pvdc/random/active-state-is-always-a-valid-armed-state",
                   test_random_commits_match_reference_model);

    return g_test_run();
}
