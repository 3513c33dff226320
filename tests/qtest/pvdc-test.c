/*
 * QTest cases for pvdc, the paravirtual display controller.
 *
 * Time only moves through the qtest clock (pvdc_step_to(),
 * pvdc_step_next()): every expectation about a vblank or a latch point is
 * exact to the nanosecond.  The test modes are tiny (64x48) so that a
 * frame lasts a round number of milliseconds.  The reference model runs
 * in pvdc-model-test.c, migration in pvdc-migration-test.c, uptimes and
 * hot-unplug in pvdc-lifetime-test.c.
 *
 * Copyright (c) 2026 The pvdc authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "hw/pci/pci_regs.h"
#include "pvdc-qtest.h"

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
    g_assert_cmphex(pvdc_rd(&t, PVDC_REG_ID), ==, PVDC_ID);
    g_assert_cmphex(pvdc_rd(&t, PVDC_REG_VERSION), ==,
                    (PVDC_VERSION_MAJOR << 16) | PVDC_VERSION_MINOR);
    g_assert_cmpuint(qpci_config_readb(t.dev, PCI_INTERRUPT_PIN), ==, 1);
    g_assert_cmpuint(qpci_find_capability(t.dev, PCI_CAP_ID_MSI, 0), !=, 0);
    g_assert_cmphex(pvdc_rd(&t, PVDC_REG_FEATURES) & PVDC_FEATURE_MSI, ==,
                    PVDC_FEATURE_MSI);
    g_assert_cmphex(pvdc_rd(&t, PVDC_REG_FEATURES) &
                    PVDC_FEATURE_MULTI_HEAD_COMMIT, !=, 0);
    g_assert_cmphex(pvdc_rd(&t, PVDC_REG_FEATURES) & PVDC_FEATURE_YCBCR, ==,
                    PVDC_FEATURE_YCBCR);
    g_assert_cmphex(pvdc_rd(&t, PVDC_REG_FEATURES) & PVDC_FEATURE_COLOR_MGMT,
                    ==, PVDC_FEATURE_COLOR_MGMT);
    g_assert_cmphex(pvdc_rd(&t, PVDC_REG_FEATURES) & PVDC_FEATURE_WRITEBACK, ==,
                    PVDC_FEATURE_WRITEBACK);
    g_assert_cmphex(pvdc_rd(&t, PVDC_REG_FEATURES) & PVDC_FEATURE_ROUTING, ==,
                    PVDC_FEATURE_ROUTING);
    g_assert_cmphex(pvdc_rd(&t, PVDC_REG_FEATURES) & PVDC_FEATURE_GUEST_MEMORY,
                    ==, PVDC_FEATURE_GUEST_MEMORY);
    g_assert_cmphex(pvdc_rd(&t, PVDC_REG_FEATURES) & PVDC_FEATURE_BOOT_DISPLAY,
                    ==, PVDC_FEATURE_BOOT_DISPLAY);
    g_assert_cmphex(pvdc_rd(&t, PVDC_REG_VERSION), ==, 1 << 16 | 7);
    g_assert_cmphex(pvdc_rd(&t, PVDC_REG_LUT_SIZE), ==,
                    PVDC_XY(PVDC_LUT_MAX_SIZE, PVDC_LUT_MAX_SIZE));
    pvdc_test_stop(&t);
}

/*
 * KiB per frame a head needs for a full-screen XRGB8888 primary and
 * overlay at 4096x2160 (34560 KiB each) and a 256x256 ARGB8888 cursor.
 */
#define HEAD_KIB_4K             (2 * 34560 + 256)
/* The same at 1920x1080: 8100 KiB a plane */
#define HEAD_KIB_1080P          (2 * 8100 + 256)

static void test_capabilities_follow_properties(void)
{
    static const struct {
        const char *props;
        uint32_t heads, overlays, scalers, max_w, max_h, bandwidth;
        uint64_t vram;
    } cases[] = {
        { NULL, 2, 3, 2, 4096, 2160, 2 * HEAD_KIB_4K, 512 * MiB },
        { "heads=1,overlays=0,scalers=0,vram-size=16M", 1, 0, 0, 4096, 2160,
          HEAD_KIB_4K, 16 * MiB },
        { "heads=8,overlays=8,scalers=4,vram-size=256M,max-width=16384,"
          "max-height=2000,bandwidth-kib=1000", 8, 8, 4, 16384, 2000, 1000,
          256 * MiB },
        { "heads=3,overlays=1,scalers=16,vram-size=128M", 3, 1, 16, 4096, 2160,
          3 * HEAD_KIB_4K, 128 * MiB },
    };

    for (int i = 0; i < ARRAY_SIZE(cases); i++) {
        PVDCTest t;

        pvdc_test_start(&t, cases[i].props);
        g_assert_cmpuint(pvdc_rd(&t, PVDC_REG_NUM_HEADS), ==, cases[i].heads);
        g_assert_cmpuint(pvdc_rd(&t, PVDC_REG_NUM_CONNECTORS), ==,
                         cases[i].heads);
        g_assert_cmpuint(pvdc_rd(&t, PVDC_REG_NUM_OVERLAYS), ==,
                         cases[i].overlays);
        g_assert_cmpuint(pvdc_rd(&t, PVDC_REG_NUM_PLANES), ==,
                         cases[i].heads * (cases[i].overlays + 2));
        g_assert_cmpuint(pvdc_rd(&t, PVDC_REG_NUM_SCALERS), ==,
                         cases[i].scalers);
        g_assert_cmpuint(t.vram_size, ==, cases[i].vram);
        g_assert_cmphex(pvdc_rd(&t, PVDC_REG_MAX_SIZE), ==,
                        PVDC_XY(cases[i].max_w, cases[i].max_h));
        g_assert_cmpuint(pvdc_rd(&t, PVDC_REG_BANDWIDTH_TOTAL), ==,
                         cases[i].bandwidth);
        pvdc_test_stop(&t);
    }
}

/*
 * vram-size and bandwidth-kib left at 0 give every head a double-buffered
 * full-screen primary and overlay at max-width x max-height (the VRAM a
 * power of two, capped at 2 GiB); set explicitly, they win.
 */
static void test_defaults_follow_heads_and_largest_mode(void)
{
    static const struct {
        const char *props;
        uint32_t bandwidth;
        uint64_t vram;
    } cases[] = {
        { "heads=1", HEAD_KIB_4K, 256 * MiB },
        { "heads=2", 2 * HEAD_KIB_4K, 512 * MiB },
        { "heads=4", 4 * HEAD_KIB_4K, 1 * GiB },
        { "heads=8", 8 * HEAD_KIB_4K, 2 * GiB },
        { "heads=1,max-width=1920,max-height=1080", HEAD_KIB_1080P, 64 * MiB },
        { "heads=2,max-width=1920,max-height=1080", 2 * HEAD_KIB_1080P,
          128 * MiB },
        /* never below 16 MiB */
        { "heads=1,max-width=64,max-height=64", 2 * 16 + 256, 16 * MiB },
        /* 8 x 4 x 135 MiB: more than the largest VRAM */
        { "heads=8,max-width=8192,max-height=4320",
          8 * (2 * 8192 * 4320 * 4 / KiB + 256), 2 * GiB },
        { "heads=8,vram-size=32M,bandwidth-kib=1000", 1000, 32 * MiB },
    };

    for (int i = 0; i < ARRAY_SIZE(cases); i++) {
        PVDCTest t;

        pvdc_test_start(&t, cases[i].props);
        g_assert_cmpuint(t.vram_size, ==, cases[i].vram);
        g_assert_cmpuint(pvdc_rd(&t, PVDC_REG_BANDWIDTH_TOTAL), ==,
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
    static const uint32_t ycbcr[] = {
        PVDC_FMT_YUYV, PVDC_FMT_NV12, PVDC_FMT_P010,
    };
    uint32_t primary, overlay, cursor, writeback, table[PVDC_MAX_FORMATS];
    PVDCTest t;
    int i, j;

    pvdc_test_start(&t, NULL);
    g_assert_cmphex(pvdc_rd(&t, PVDC_REG_CURSOR_MAX), ==, PVDC_XY(256, 256));
    /* upscaling without limit: 0 */
    g_assert_cmphex(pvdc_rd(&t, PVDC_REG_SCALE_LIMITS), ==,
                    4 << PVDC_SCALE_MAX_DOWNSCALE_SHIFT |
                    0 << PVDC_SCALE_MAX_UPSCALE_SHIFT);
    /* pixman's 32-bit words, nothing more */
    g_assert_cmpuint(pvdc_rd(&t, PVDC_REG_PITCH_ALIGN), ==, 4);
    g_assert_cmpuint(pvdc_rd(&t, PVDC_REG_OFFSET_ALIGN), ==, 4);

    for (i = 0; i < PVDC_MAX_FORMATS; i++) {
        table[i] = pvdc_rd(&t, PVDC_REG_FORMAT_TABLE(i));
    }
    primary = pvdc_rd(&t, PVDC_REG_FORMATS_PRIMARY);
    overlay = pvdc_rd(&t, PVDC_REG_FORMATS_OVERLAY);
    cursor = pvdc_rd(&t, PVDC_REG_FORMATS_CURSOR);
    writeback = pvdc_rd(&t, PVDC_REG_FORMATS_WRITEBACK);
    for (i = 0; i < PVDC_MAX_FORMATS; i++) {
        bool is_rgb = false, is_ycbcr = false;
        bool is_8888 = table[i] == PVDC_FMT_XRGB8888 ||
                       table[i] == PVDC_FMT_ARGB8888 ||
                       table[i] == PVDC_FMT_XBGR8888 ||
                       table[i] == PVDC_FMT_ABGR8888;

        for (j = 0; j < ARRAY_SIZE(rgb); j++) {
            is_rgb |= table[i] == rgb[j];
        }
        for (j = 0; j < ARRAY_SIZE(ycbcr); j++) {
            is_ycbcr |= table[i] == ycbcr[j];
        }
        if (!table[i]) {
            g_assert_false((primary | overlay | cursor | writeback) & BIT(i));
            continue;
        }
        /* 32-bit pixels: the four 8888 formats and XRGB2101010 */
        g_assert_cmpint(!!(writeback & BIT(i)), ==,
                        is_8888 || table[i] == PVDC_FMT_XRGB2101010);
        g_assert(is_rgb || is_ycbcr);
        g_assert_cmpint(!!(primary & BIT(i)), ==, is_rgb);
        g_assert_true(overlay & BIT(i));
        g_assert_cmpint(!!(cursor & BIT(i)), ==,
                        table[i] == PVDC_FMT_ARGB8888);
    }
    g_assert_cmpuint(ctpop32(overlay), ==, ARRAY_SIZE(rgb) + ARRAY_SIZE(ycbcr));
    g_assert_cmpuint(ctpop32(writeback), ==, 5);
    /* The two-plane formats at the places the spec gives them. */
    g_assert_cmphex(table[7], ==, PVDC_FMT_NV12);
    g_assert_cmphex(table[8], ==, PVDC_FMT_P010);
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
    { "vram-size", "4G" },
    { "vram-size", "24M" },
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

static void test_reset_values(void)
{
    static const char *const props[] = {
        NULL, "heads=1,overlays=0", "heads=3,overlays=1,bandwidth-kib=1000",
        "heads=8,overlays=8",
    };

    for (int i = 0; i < ARRAY_SIZE(props); i++) {
        PVDCTest t;

        pvdc_test_start(&t, props[i]);
        pvdc_assert_reset_state(&t);
        pvdc_test_stop(&t);
    }
}

static void test_edid_and_connector(void)
{
    PVDCTest t;

    pvdc_test_start(&t, "xres=800,yres=600");
    for (unsigned int h = 0; h < t.heads; h++) {
        g_assert_cmphex(pvdc_rd(&t, PVDC_EDID(h)), ==, 0xffffff00);
        g_assert_cmphex(pvdc_rd(&t, PVDC_EDID(h) + 4), ==, 0x00ffffff);
        g_assert_cmphex(pvdc_head_ctl(&t, h, PVDC_HEAD_CONNECTOR), ==,
                        PVDC_CONNECTOR_CONNECTED);
        g_assert_cmphex(pvdc_head_ctl(&t, h, PVDC_HEAD_PREFERRED), ==,
                        PVDC_XY(800, 600));
        g_assert_cmphex(pvdc_head_ctl(&t, h, PVDC_HEAD_SUGGESTED_POS), ==,
                        PVDC_XY(800 * h, 0));
    }
    pvdc_test_stop(&t);
}

/*
 * The EDID of @head as a guest checks it: the header, the checksum of
 * every 128-byte block, and exactly as many extension blocks as the
 * window holds after the base block (a CTA-861 block).
 */
static void assert_edid_valid(PVDCTest *t, unsigned int head)
{
    static const uint8_t header[] = { 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                      0 };
    uint8_t edid[PVDC_EDID_SIZE];
    unsigned int blocks = PVDC_EDID_SIZE / 128;

    for (int i = 0; i < PVDC_EDID_SIZE; i += 4) {
        stl_le_p(edid + i, pvdc_rd(t, PVDC_EDID(head) + i));
    }
    g_assert(memcmp(edid, header, sizeof(header)) == 0);
    g_assert_cmpuint(edid[126], ==, blocks - 1);
    for (unsigned int b = 0; b < blocks; b++) {
        uint8_t sum = 0;

        for (int i = 0; i < 128; i++) {
            sum += edid[b * 128 + i];
        }
        g_assert_cmpuint(sum, ==, 0);
    }
    g_assert_cmphex(edid[128], ==, 0x02);
}

/* Regenerated from scratch at every change: still one valid EDID. */
static void test_edid_stays_valid_after_repeated_changes(void)
{
    static const uint32_t widths[] = { 800, 4000, 640, 1920, 1024 };
    PVDCTest t;

    pvdc_test_start(&t, "xres=800,yres=600,max-height=4096");
    assert_edid_valid(&t, 0);
    assert_edid_valid(&t, 1);
    for (int i = 0; i < ARRAY_SIZE(widths); i++) {
        pvdc_qom_set_uint(t.qts, "head0-xres", widths[i]);
        pvdc_qom_set_uint(t.qts, "head0-yres", widths[i] * 3 / 4);
        assert_edid_valid(&t, 0);
        g_assert_cmphex(pvdc_head_ctl(&t, 0, PVDC_HEAD_PREFERRED), ==,
                        PVDC_XY(widths[i], widths[i] * 3 / 4));
    }
    /* Head 1 did not change, but its position did: still valid. */
    assert_edid_valid(&t, 1);
    /* A system reset keeps what the host set, and the EDID valid. */
    qtest_system_reset(t.qts);
    pvdc_test_detach(&t);
    pvdc_test_attach(&t, t.qts);
    assert_edid_valid(&t, 0);
    pvdc_test_stop(&t);
}

static void test_vram_bar_is_memory(void)
{
    PVDCTest t;

    pvdc_test_start(&t, NULL);
    qpci_io_writel(t.dev, t.vram, 0x1000, 0xdeadbeef);
    g_assert_cmphex(qpci_io_readl(t.dev, t.vram, 0x1000), ==, 0xdeadbeef);
    qpci_io_writel(t.dev, t.vram, t.vram_size - 4, 0xfeedface);
    g_assert_cmphex(qpci_io_readl(t.dev, t.vram, t.vram_size - 4), ==,
                    0xfeedface);
    pvdc_test_stop(&t);
}

/*
 * VRAM is a 64-bit prefetchable BAR (BAR 2 and 3), so the firmware may
 * place the 512 MiB to 2 GiB the defaults give above 4 GiB: the harness
 * puts the 1 GiB of four heads there.
 */
static void test_vram_bar_is_64_bit_prefetchable(void)
{
    PVDCTest t;

    pvdc_test_start(&t, "heads=4");
    g_assert_cmphex(qpci_config_readl(t.dev, PCI_BASE_ADDRESS_0 +
                                      PVDC_VRAM_BAR * 4) &
                    ~PCI_BASE_ADDRESS_MEM_MASK, ==,
                    PCI_BASE_ADDRESS_SPACE_MEMORY |
                    PCI_BASE_ADDRESS_MEM_TYPE_64 |
                    PCI_BASE_ADDRESS_MEM_PREFETCH);
    g_assert_cmphex(t.vram.addr, >=, 4 * GiB);
    qtest_writel(t.qts, t.vram.addr + t.vram_size - 4, 0xfeedface);
    g_assert_cmphex(qtest_readl(t.qts, t.vram.addr + t.vram_size - 4), ==,
                    0xfeedface);
    pvdc_test_stop(&t);
}

/*
 * Show on every head a full-screen XRGB8888 primary and overlay at the
 * largest mode and the largest cursor, from buffer @buffer (0 or 1) of
 * each: four framebuffers and two cursor images a head, all different,
 * which end at @vram_end.  The first refusal, or APPLIED.
 */
static uint32_t show_full_screen_planes(PVDCTest *t, unsigned int buffer,
                                        uint64_t *vram_end)
{
    uint32_t pitch = ROUND_UP(t->max_w * MODE_CPP, 64);
    uint64_t fb_size = (uint64_t)pitch * t->max_h;
    uint32_t cursor_max = pvdc_rd(t, PVDC_REG_CURSOR_MAX);
    uint32_t cursor_w = PVDC_X(cursor_max), cursor_h = PVDC_Y(cursor_max);
    uint64_t cursor_size = (uint64_t)cursor_w * MODE_CPP * cursor_h;
    /* 60 Hz */
    uint32_t htotal = t->max_w + 160, vtotal = t->max_h + 90;
    uint32_t clock_khz = (uint64_t)htotal * vtotal * 60 / 1000;

    *vram_end = t->heads * (4 * fb_size + 2 * cursor_size);
    for (unsigned int h = 0; h < t->heads; h++) {
        unsigned int cursor = pvdc_cursor_of(t, h);
        uint64_t cursor_offset = t->heads * 4 * fb_size +
                                 (h * 2 + buffer) * cursor_size;
        uint32_t result;

        pvdc_write_fb(t, cursor, PVDC_FMT_ARGB8888, cursor_offset,
                      cursor_w * MODE_CPP, cursor_w, cursor_h);
        pvdc_wr_plane(t, cursor, PVDC_PS_HEAD, h);
        pvdc_wr_plane(t, cursor, PVDC_PS_ZPOS, 2);
        pvdc_wr_plane(t, cursor, PVDC_PS_ALPHA, 0xffff);
        pvdc_wr_plane(t, cursor, PVDC_PS_CTRL, PVDC_PS_CTRL_ENABLE);

        if (!buffer) {
            pvdc_write_mode_sized(t, h, t->max_w, t->max_h, htotal, vtotal,
                                  clock_khz);
        }
        for (unsigned int z = 0; z < 2; z++) {
            unsigned int plane = pvdc_plane_of(t, h, PRIMARY + z);
            uint64_t offset = ((h * 2 + z) * 2 + buffer) * fb_size;

            /* PS_FB_OFFSET is 32 bits */
            g_assert_cmpuint(offset + fb_size, <=, 4 * GiB);
            pvdc_wr_plane(t, plane, PVDC_PS_HEAD, h);
            pvdc_write_fb(t, plane, PVDC_FMT_XRGB8888, offset, pitch, t->max_w,
                          t->max_h);
            pvdc_wr_plane(t, plane, PVDC_PS_ZPOS, z);
            pvdc_wr_plane(t, plane, PVDC_PS_ALPHA, 0xffff);
            pvdc_wr_plane(t, plane, PVDC_PS_CTRL, PVDC_PS_CTRL_ENABLE);
        }
        pvdc_doorbell(t, h);
        result = pvdc_wait_outcome(t, h, NANOSECONDS_PER_SECOND);
        if (result != PVDC_RESULT_APPLIED) {
            return result;
        }
    }
    return PVDC_RESULT_APPLIED;
}

/*
 * Issue 14: with default properties every head shows a full-screen primary
 * and overlay at the largest mode, double-buffered, and the largest cursor.
 * The old defaults (24300 KiB a head, 64 MiB) refused it, and one KiB a
 * head less refuses it: the budget is exactly what these planes cost.
 */
static void test_defaults_show_two_full_screen_planes_per_head(void)
{
    static const struct {
        uint32_t heads;
        const char *props;
        uint32_t head_kib;      /* bandwidth-kib / heads, 0: default */
        uint32_t code;
    } cases[] = {
        { 2, "", 0, PVDC_RESULT_APPLIED },
        { 4, "", 0, PVDC_RESULT_APPLIED },
        { 2, "", 24300, PVDC_ERR_BANDWIDTH },
        { 2, "", HEAD_KIB_4K - 1, PVDC_ERR_BANDWIDTH },
        { 4, ",vram-size=64M", 0, PVDC_ERR_FB_BOUNDS },
    };

    for (int i = 0; i < ARRAY_SIZE(cases); i++) {
        g_autofree char *props =
            g_strdup_printf("heads=%u,bandwidth-kib=%u%s", cases[i].heads,
                            cases[i].heads * cases[i].head_kib,
                            cases[i].props);
        uint64_t vram_end;
        PVDCTest t;

        pvdc_test_start(&t, props);
        g_assert_cmphex(show_full_screen_planes(&t, 0, &vram_end) &
                        PVDC_RESULT_CODE_MASK, ==, cases[i].code);
        if (cases[i].code == PVDC_RESULT_APPLIED) {
            /* and flip every plane to its second buffer */
            g_assert_cmphex(show_full_screen_planes(&t, 1, &vram_end), ==,
                            PVDC_RESULT_APPLIED);
            /* All in the default VRAM, not past its end. */
            g_assert_cmpuint(vram_end, <=, t.vram_size);
        }
        pvdc_test_stop(&t);
    }
}

/*
 * Firmware for a TCG CPU, at the top of a 64 KiB BIOS image (0xf0000 in
 * real mode), with pvdc's BAR 0 at 0xd0000 (the PAM registers forward that
 * range to PCI after reset).  Assembled from:
 *
 *      cli
 *      xor  %ax, %ax; mov %ax, %ss; mov $0x7000, %sp; mov %ax, %es
 *      mov  $0xd000, %ax; mov %ax, %ds
 *      movq %cs:value, %mm0
 *      movq %mm0, 0x4018           8-byte write: PS_SRC_X, PS_SRC_Y of plane 0
 *      movq 0x4018, %mm1           8-byte read of the same
 *      movq %mm1, %es:0x600
 *      movb $0, 0x4034             1-byte write to PS_ALPHA of plane 0
 *      movw 0x4034, %ax            2-byte read of it
 *      movw %ax, %es:0x610
 *      movl $0x600d600d, %es:0x608 done
 *   1: hlt; jmp 1b
 *   value: .quad 0x1234567889abcdef
 *
 * and at 0xfff0, the reset vector: ljmp $0xf000, $0.
 */
static const uint8_t access_firmware[] = {
    0xfa, 0x31, 0xc0, 0x8e, 0xd0, 0xbc, 0x00, 0x70, 0x8e, 0xc0, 0xb8, 0x00,
    0xd0, 0x8e, 0xd8, 0x2e, 0x0f, 0x6f, 0x06, 0x3e, 0x00, 0x0f, 0x7f, 0x06,
    0x18, 0x40, 0x0f, 0x6f, 0x0e, 0x18, 0x40, 0x26, 0x0f, 0x7f, 0x0e, 0x00,
    0x06, 0xc6, 0x06, 0x34, 0x40, 0x00, 0xa1, 0x34, 0x40, 0x26, 0xa3, 0x10,
    0x06, 0x26, 0x66, 0xc7, 0x06, 0x08, 0x06, 0x0d, 0x60, 0x0d, 0x60, 0xf4,
    0xeb, 0xfd, 0xef, 0xcd, 0xab, 0x89, 0x78, 0x56, 0x34, 0x12
};
static const uint8_t access_reset_vector[] = { 0xea, 0x00, 0x00, 0x00, 0xf0 };
#define ACCESS_BAR0         0xd0000
#define ACCESS_RESULT       0x600
#define ACCESS_DONE         0x608
#define ACCESS_READ16       0x610

/*
 * A CPU's 8-byte access is two 32-bit ones, lower address first; 1- and
 * 2-byte ones are refused.  Only TCG hands the device an 8-byte access
 * whole (KVM and qtest split it before the memory core sees it), so a
 * TCG CPU makes the accesses here.
 */
static void test_8_byte_access_is_two_32_bit_accesses(void)
{
    g_autofree uint8_t *rom = g_malloc0(64 * KiB);
    g_autofree char *path = NULL;
    PVDCTest t = {};
    int fd, i;

    memcpy(rom, access_firmware, sizeof(access_firmware));
    memcpy(rom + 0xfff0, access_reset_vector, sizeof(access_reset_vector));
    fd = g_file_open_tmp("pvdc-firmware-XXXXXX.bin", &path, NULL);
    g_assert_cmpint(fd, >=, 0);
    g_assert_cmpint(write(fd, rom, 64 * KiB), ==, 64 * KiB);
    close(fd);

    t.qts = qtest_initf("-machine q35 -nodefaults -accel tcg -S -bios %s "
                        "-device pvdc,addr=04.0,id=pvdc0", path);
    t.bus = qpci_new_pc(t.qts, NULL);
    t.dev = qpci_device_find(t.bus, QPCI_DEVFN(4, 0));
    g_assert_nonnull(t.dev);
    qpci_config_writel(t.dev, PCI_BASE_ADDRESS_0, ACCESS_BAR0);
    qpci_config_writew(t.dev, PCI_COMMAND, PCI_COMMAND_MEMORY);
    t.mmio.addr = ACCESS_BAR0;
    g_assert_cmphex(pvdc_rd(&t, PVDC_REG_ID), ==, PVDC_ID);

    qtest_qmp_assert_success(t.qts, "{ 'execute': 'cont' }");
    /* The CPU runs on its own: poll what it writes, for 10 s at most. */
    for (i = 0; i < 10000 &&
         qtest_readl(t.qts, ACCESS_DONE) != 0x600d600d; i++) {
        g_usleep(1000);
    }
    g_assert_cmphex(qtest_readl(t.qts, ACCESS_DONE), ==, 0x600d600d);

    g_assert_cmphex(pvdc_rd(&t, PVDC_PLANE_SHADOW(0) + PVDC_PS_SRC_X), ==,
                    0x89abcdef);
    g_assert_cmphex(pvdc_rd(&t, PVDC_PLANE_SHADOW(0) + PVDC_PS_SRC_Y), ==,
                    0x12345678);
    g_assert_cmphex(qtest_readq(t.qts, ACCESS_RESULT), ==,
                    0x1234567889abcdefull);
    g_assert_cmphex(pvdc_rd(&t, PVDC_PLANE_SHADOW(0) + PVDC_PS_ALPHA), ==,
                    0xffff);
    g_assert_cmphex(qtest_readw(t.qts, ACCESS_READ16), ==, 0);
    unlink(path);
    pvdc_test_stop(&t);
}

/* ------------------------------------------------------------------------ */
/* Shadow, armed, active                                                    */
/* ------------------------------------------------------------------------ */

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

/* ------------------------------------------------------------------------ */
/* Validation rules: one test per rule                                      */
/* ------------------------------------------------------------------------ */

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
    return pvdc_plane_of(t, 0, PRIMARY);
}

static unsigned int overlay0(PVDCTest *t)
{
    return pvdc_plane_of(t, 0, OVERLAY(0));
}

static unsigned int cursor0(PVDCTest *t)
{
    return pvdc_cursor_of(t, 0);
}

static unsigned int primary1(PVDCTest *t)
{
    return pvdc_plane_of(t, 1, PRIMARY);
}

static unsigned int break_head_reserved(PVDCTest *t)
{
    /* the lowest reserved bit */
    pvdc_wr(t, PVDC_HEAD_SHADOW(0) + PVDC_HS_CTRL,
            PVDC_HS_CTRL_ENABLE | BIT(ctz32(~PVDC_HS_CTRL_VALID_MASK)));
    return 0;
}

static unsigned int break_mode(PVDCTest *t)
{
    pvdc_write_mode(t, 1, CLOCK_1MS);
    /* hsync starts inside the active area */
    pvdc_wr(t, PVDC_HEAD_SHADOW(1) + PVDC_HS_HSYNC,
            PVDC_XY(MODE_W - 1, MODE_W + 6));
    return 1;
}

static unsigned int break_modeset_required(PVDCTest *t)
{
    pvdc_wr(t, PVDC_HEAD_SHADOW(0) + PVDC_HS_PIXEL_CLOCK, CLOCK_2MS);
    return 0;
}

static unsigned int break_bandwidth_change(PVDCTest *t)
{
    pvdc_wr(t, PVDC_HEAD_SHADOW(0) + PVDC_HS_BANDWIDTH,
            RULE_HEAD_BANDWIDTH - 1);
    return 0;
}

static unsigned int break_bandwidth_alloc(PVDCTest *t)
{
    pvdc_write_mode(t, 1, CLOCK_1MS);
    pvdc_wr(t, PVDC_HEAD_SHADOW(1) + PVDC_HS_BANDWIDTH,
            RULE_HEAD_BANDWIDTH + 1);
    return 1;
}

static unsigned int break_connector_range(PVDCTest *t)
{
    pvdc_write_mode(t, 1, CLOCK_1MS);
    pvdc_wr_head(t, 1, PVDC_HS_CONNECTOR, t->heads);
    return 1;
}

static unsigned int break_connector_all_ones(PVDCTest *t)
{
    pvdc_write_mode(t, 1, CLOCK_1MS);
    pvdc_wr_head(t, 1, PVDC_HS_CONNECTOR, 0xffffffff);
    return 1;
}

/* Connector 0 is driven by head 0, active and outside the commit. */
static unsigned int break_connector_taken(PVDCTest *t)
{
    pvdc_write_mode(t, 1, CLOCK_1MS);
    pvdc_wr_head(t, 1, PVDC_HS_CONNECTOR, 0);
    return 1;
}

static unsigned int break_connector_change(PVDCTest *t)
{
    /* connector 1 is free: only the modeset rule stands in the way */
    pvdc_wr_head(t, 0, PVDC_HS_CONNECTOR, 1);
    return 0;
}

/* Colour tables at 1 MiB (DEGAMMA), 2 MiB (CTM) and 3 MiB (GAMMA). */
static void write_color_regs(PVDCTest *t, unsigned int head, uint32_t stages,
                             uint32_t sizes)
{
    pvdc_wr_head(t, head, PVDC_HS_DEGAMMA_LUT, 1 * MiB);
    pvdc_wr_head(t, head, PVDC_HS_CTM, 2 * MiB);
    pvdc_wr_head(t, head, PVDC_HS_GAMMA_LUT, 3 * MiB);
    pvdc_wr_head(t, head, PVDC_HS_LUT_SIZES, sizes);
    pvdc_wr_head(t, head, PVDC_HS_CTRL, PVDC_HS_CTRL_ENABLE | stages);
}

static unsigned int break_color_lut_size(PVDCTest *t)
{
    write_color_regs(t, 0, PVDC_HS_CTRL_DEGAMMA | PVDC_HS_CTRL_GAMMA,
                     PVDC_XY(256, PVDC_LUT_MAX_SIZE + 1));
    return 0;
}

static unsigned int break_color_lut_align(PVDCTest *t)
{
    write_color_regs(t, 0, PVDC_HS_CTRL_DEGAMMA, PVDC_XY(256, 256));
    pvdc_wr_head(t, 0, PVDC_HS_DEGAMMA_LUT, 1 * MiB + PVDC_COLOR_ALIGN / 2);
    return 0;
}

static unsigned int break_color_ctm_bounds(PVDCTest *t)
{
    write_color_regs(t, 0, PVDC_HS_CTRL_CTM, 0);
    pvdc_wr_head(t, 0, PVDC_HS_CTM, t->vram_size - PVDC_CTM_SIZE + 8);
    return 0;
}

/* A head being enabled with a broken pipeline. */
static unsigned int break_color_on_enable(PVDCTest *t)
{
    pvdc_write_mode(t, 1, CLOCK_1MS);
    write_color_regs(t, 1, PVDC_HS_CTRL_GAMMA, PVDC_XY(256, 1));
    return 1;
}

/* A writeback target of the whole test mode at 4 MiB, enabled on @head. */
static void write_wb_regs(PVDCTest *t, unsigned int head, uint32_t format)
{
    pvdc_wr_head(t, head, PVDC_HS_WB_FORMAT, format);
    pvdc_wr_head(t, head, PVDC_HS_WB_OFFSET, 4 * MiB);
    pvdc_wr_head(t, head, PVDC_HS_WB_PITCH, MODE_PITCH);
    pvdc_wr_head(t, head, PVDC_HS_CTRL,
                 PVDC_HS_CTRL_ENABLE | PVDC_HS_CTRL_WRITEBACK);
}

/* Unlike colour stages, writeback is refused on a disabled head. */
static unsigned int break_wb_disabled_head(PVDCTest *t)
{
    write_wb_regs(t, 1, PVDC_FMT_XRGB8888);
    pvdc_wr_head(t, 1, PVDC_HS_CTRL, PVDC_HS_CTRL_WRITEBACK);
    return 1;
}

static unsigned int break_wb_format(PVDCTest *t)
{
    write_wb_regs(t, 0, PVDC_FMT_RGB565);
    return 0;
}

static unsigned int break_wb_offset_align(PVDCTest *t)
{
    write_wb_regs(t, 0, PVDC_FMT_ABGR8888);
    pvdc_wr_head(t, 0, PVDC_HS_WB_OFFSET, 4 * MiB + 2);
    return 0;
}

static unsigned int break_wb_pitch_align(PVDCTest *t)
{
    write_wb_regs(t, 0, PVDC_FMT_XRGB8888);
    pvdc_wr_head(t, 0, PVDC_HS_WB_PITCH, MODE_PITCH + 2);
    return 0;
}

static unsigned int break_wb_pitch_small(PVDCTest *t)
{
    write_wb_regs(t, 0, PVDC_FMT_XRGB8888);
    pvdc_wr_head(t, 0, PVDC_HS_WB_PITCH, MODE_PITCH - 64);
    return 0;
}

static unsigned int break_wb_bounds(PVDCTest *t)
{
    write_wb_regs(t, 0, PVDC_FMT_ARGB8888);
    /* one aligned step too far */
    pvdc_wr_head(t, 0, PVDC_HS_WB_OFFSET,
                 t->vram_size - (uint64_t)MODE_PITCH * MODE_H + 64);
    return 0;
}

/* A head being enabled with a target it cannot take. */
static unsigned int break_wb_on_enable(PVDCTest *t)
{
    pvdc_write_mode(t, 1, CLOCK_1MS);
    write_wb_regs(t, 1, 0);
    return 1;
}

static unsigned int break_plane_ctrl(PVDCTest *t)
{
    pvdc_write_plane(t, overlay0(t), 0, 0, 1);
    pvdc_wr_plane(t, overlay0(t), PVDC_PS_CTRL, PVDC_PS_CTRL_ENABLE | BIT(1));
    return 0;
}

static unsigned int break_plane_ctrl_blend(PVDCTest *t)
{
    pvdc_write_plane(t, overlay0(t), 0, 0, 1);
    pvdc_wr_plane(t, overlay0(t), PVDC_PS_CTRL, PVDC_PS_CTRL_ENABLE |
                  PVDC_PS_CTRL_BLEND_MASK << PVDC_PS_CTRL_BLEND_SHIFT);
    return 0;
}

static void write_cursor(PVDCTest *t, unsigned int plane, unsigned int head)
{
    pvdc_write_plane(t, plane, head, 0, t->overlays + 1);
    pvdc_wr_plane(t, plane, PVDC_PS_FORMAT, PVDC_FMT_ARGB8888);
}

static unsigned int break_plane_ctrl_cursor_rotation(PVDCTest *t)
{
    write_cursor(t, cursor0(t), 0);
    pvdc_wr_plane(t, cursor0(t), PVDC_PS_CTRL, PVDC_PS_CTRL_ENABLE |
                  PVDC_PS_CTRL_ROTATE_180);
    return 0;
}

static unsigned int break_plane_head(PVDCTest *t)
{
    /* A primary plane cannot leave its home head. */
    pvdc_write_plane(t, primary1(t), 0, 0, 1);
    return 0;
}

static unsigned int break_plane_busy(PVDCTest *t)
{
    pvdc_enable_head(t, 1, CLOCK_1MS);
    pvdc_write_plane(t, overlay0(t), 1, 0, 1);
    pvdc_shrink_plane(t, overlay0(t));
    pvdc_doorbell(t, 1);
    g_assert_cmphex(pvdc_wait_outcome(t, 1, 2 * SCALE_MS), ==,
                    PVDC_RESULT_APPLIED);
    (void)pvdc_rd(t, PVDC_REG_INT_ACK);
    /* Still enabled on head 1, now committed on head 0. */
    pvdc_wr_plane(t, overlay0(t), PVDC_PS_HEAD, 0);
    return 0;
}

static unsigned int break_plane_busy_disabled(PVDCTest *t)
{
    /* Taking it away disabled changes head 1 just as much. */
    break_plane_busy(t);
    pvdc_wr_plane(t, overlay0(t), PVDC_PS_CTRL, 0);
    return 0;
}

static unsigned int break_head_disabled_outside_commit(PVDCTest *t)
{
    pvdc_enable_head(t, 1, CLOCK_1MS);
    pvdc_write_plane(t, overlay0(t), 1, 0, 1);
    pvdc_shrink_plane(t, overlay0(t));
    pvdc_doorbell(t, 1);
    g_assert_cmphex(pvdc_wait_outcome(t, 1, 2 * SCALE_MS), ==,
                    PVDC_RESULT_APPLIED);
    (void)pvdc_rd(t, PVDC_REG_INT_ACK);
    /* Head 1 off, its primary too; overlay 0 now shadows head 0. */
    pvdc_wr(t, PVDC_HEAD_SHADOW(1) + PVDC_HS_CTRL, 0);
    pvdc_wr_plane(t, primary1(t), PVDC_PS_CTRL, 0);
    pvdc_wr_plane(t, overlay0(t), PVDC_PS_HEAD, 0);
    return 1;
}

static unsigned int break_head_disabled(PVDCTest *t)
{
    pvdc_wr(t, PVDC_HEAD_SHADOW(0) + PVDC_HS_CTRL, 0);
    return 0;
}

static unsigned int break_format(PVDCTest *t)
{
    pvdc_wr_plane(t, primary0(t), PVDC_PS_FORMAT, PVDC_FMT_YUYV);
    return 0;
}

static unsigned int break_format_nv12_primary(PVDCTest *t)
{
    pvdc_wr_plane(t, primary0(t), PVDC_PS_FORMAT, PVDC_FMT_NV12);
    return 0;
}

static unsigned int break_format_p010_cursor(PVDCTest *t)
{
    write_cursor(t, cursor0(t), 0);
    pvdc_shrink_plane(t, cursor0(t));
    pvdc_wr_plane(t, cursor0(t), PVDC_PS_FORMAT, PVDC_FMT_P010);
    return 0;
}

/*
 * A 16x16 NV12 (@format) overlay of head 0 with a valid Cb:Cr plane at
 * 1 MiB: what the chroma rules start from.
 */
static void write_two_plane_overlay(PVDCTest *t, uint32_t format)
{
    pvdc_write_plane(t, overlay0(t), 0, 0, 1);
    pvdc_shrink_plane(t, overlay0(t));
    pvdc_wr_plane(t, overlay0(t), PVDC_PS_FORMAT, format);
    pvdc_wr_plane(t, overlay0(t), PVDC_PS_FB_SIZE, PVDC_XY(16, 16));
    pvdc_wr_plane(t, overlay0(t), PVDC_PS_FB_PITCH, 64);
    pvdc_wr_plane(t, overlay0(t), PVDC_PS_CHROMA_OFFSET, 1 * MiB);
    pvdc_wr_plane(t, overlay0(t), PVDC_PS_CHROMA_PITCH, 64);
}

static unsigned int break_color_encoding(PVDCTest *t)
{
    write_two_plane_overlay(t, PVDC_FMT_NV12);
    pvdc_wr_plane(t, overlay0(t), PVDC_PS_CTRL, PVDC_PS_CTRL_ENABLE |
                  PVDC_PS_CTRL_COLOR_ENCODING_MASK <<
                  PVDC_PS_CTRL_COLOR_ENCODING_SHIFT);
    return 0;
}

static unsigned int break_color_encoding_rgb(PVDCTest *t)
{
    /* checked for every format, even one that ignores it */
    pvdc_wr_plane(t, primary0(t), PVDC_PS_CTRL, PVDC_PS_CTRL_ENABLE |
                  3u << PVDC_PS_CTRL_COLOR_ENCODING_SHIFT |
                  PVDC_PS_CTRL_COLOR_RANGE_FULL);
    return 0;
}

static unsigned int break_chroma_offset_align(PVDCTest *t)
{
    write_two_plane_overlay(t, PVDC_FMT_NV12);
    pvdc_wr_plane(t, overlay0(t), PVDC_PS_CHROMA_OFFSET, 1 * MiB + 2);
    return 0;
}

static unsigned int break_chroma_pitch_small(PVDCTest *t)
{
    /* P010, 17 pixels wide: 9 samples of 4 bytes, 36 bytes a line */
    write_two_plane_overlay(t, PVDC_FMT_P010);
    pvdc_wr_plane(t, overlay0(t), PVDC_PS_FB_SIZE, PVDC_XY(17, 16));
    pvdc_wr_plane(t, overlay0(t), PVDC_PS_FB_PITCH, 64);
    pvdc_wr_plane(t, overlay0(t), PVDC_PS_CHROMA_PITCH, 0);
    return 0;
}

static unsigned int break_chroma_pitch_align(PVDCTest *t)
{
    write_two_plane_overlay(t, PVDC_FMT_NV12);
    pvdc_wr_plane(t, overlay0(t), PVDC_PS_CHROMA_PITCH, 98);
    return 0;
}

static unsigned int break_chroma_bounds(PVDCTest *t)
{
    /* 8 lines 64 bytes apart, the last of 16: ends 16 bytes past VRAM */
    write_two_plane_overlay(t, PVDC_FMT_NV12);
    pvdc_wr_plane(t, overlay0(t), PVDC_PS_CHROMA_OFFSET,
                  t->vram_size - 7 * 64);
    return 0;
}

static unsigned int break_fb_size(PVDCTest *t)
{
    pvdc_wr_plane(t, primary0(t), PVDC_PS_FB_SIZE, PVDC_XY(0, MODE_H));
    return 0;
}

static unsigned int break_fb_size_yuyv_odd(PVDCTest *t)
{
    pvdc_write_plane(t, overlay0(t), 0, 0, 1);
    pvdc_wr_plane(t, overlay0(t), PVDC_PS_FORMAT, PVDC_FMT_YUYV);
    pvdc_wr_plane(t, overlay0(t), PVDC_PS_FB_SIZE, PVDC_XY(MODE_W - 1, MODE_H));
    pvdc_wr_plane(t, overlay0(t), PVDC_PS_SRC_W, FP16(MODE_W - 1));
    return 0;
}

static unsigned int break_pitch(PVDCTest *t)
{
    pvdc_wr_plane(t, primary0(t), PVDC_PS_FB_PITCH, MODE_PITCH - 64);
    return 0;
}

static unsigned int break_pitch_alignment(PVDCTest *t)
{
    pvdc_wr_plane(t, primary0(t), PVDC_PS_FB_PITCH, MODE_PITCH + 2);
    return 0;
}

/*
 * Issue 35: a one-line framebuffer, offset + pitch * 0 + line inside
 * VRAM, that the engine could not draw.
 */
static unsigned int break_pitch_one_line_2g(PVDCTest *t)
{
    pvdc_wr_plane(t, primary0(t), PVDC_PS_FB_SIZE, PVDC_XY(MODE_W, 1));
    pvdc_wr_plane(t, primary0(t), PVDC_PS_SRC_H, FP16(1));
    pvdc_wr_plane(t, primary0(t), PVDC_PS_DST_SIZE, PVDC_XY(MODE_W, 1));
    pvdc_wr_plane(t, primary0(t), PVDC_PS_FB_PITCH, PVDC_FB_SPAN_MAX + 1);
    return 0;
}

/* Aligned pitches, so that only their span breaks a rule. */
static unsigned int break_pitch_span(PVDCTest *t)
{
    pvdc_wr_plane(t, primary0(t), PVDC_PS_FB_PITCH,
                  ROUND_UP(PVDC_FB_SPAN_MAX / MODE_H + 1, 64));
    return 0;
}

/* One Cb:Cr line of two Y lines, inside VRAM at any pitch */
static unsigned int break_chroma_pitch_span(PVDCTest *t)
{
    write_two_plane_overlay(t, PVDC_FMT_NV12);
    pvdc_wr_plane(t, overlay0(t), PVDC_PS_FB_SIZE, PVDC_XY(16, 2));
    pvdc_wr_plane(t, overlay0(t), PVDC_PS_SRC_H, FP16(2));
    pvdc_wr_plane(t, overlay0(t), PVDC_PS_DST_SIZE, PVDC_XY(16, 2));
    pvdc_wr_plane(t, overlay0(t), PVDC_PS_CHROMA_PITCH, PVDC_FB_SPAN_MAX + 1);
    return 0;
}

static unsigned int break_offset_align(PVDCTest *t)
{
    pvdc_wr_plane(t, primary0(t), PVDC_PS_FB_OFFSET, 2);
    return 0;
}

static unsigned int break_fb_bounds(PVDCTest *t)
{
    uint64_t size = (uint64_t)MODE_PITCH * (MODE_H - 1) + MODE_PITCH;

    /* Ends 64 bytes past the end of VRAM. */
    pvdc_wr_plane(t, primary0(t), PVDC_PS_FB_OFFSET, t->vram_size - size + 64);
    return 0;
}

static unsigned int break_src_rect(PVDCTest *t)
{
    pvdc_wr_plane(t, primary0(t), PVDC_PS_SRC_X, FP16(1));
    return 0;
}

static unsigned int break_dst_rect(PVDCTest *t)
{
    uint32_t max_w = PVDC_X(pvdc_rd(t, PVDC_REG_MAX_SIZE));

    pvdc_wr_plane(t, primary0(t), PVDC_PS_DST_POS, PVDC_XY(-(int)max_w - 1, 0));
    return 0;
}

static unsigned int break_cursor(PVDCTest *t)
{
    write_cursor(t, cursor0(t), 0);
    /* 2x upscaling is within the limits, but a cursor never scales */
    pvdc_wr_plane(t, cursor0(t), PVDC_PS_SRC_W, FP16(MODE_W / 2));
    pvdc_wr_plane(t, cursor0(t), PVDC_PS_SRC_H, FP16(MODE_H / 2));
    return 0;
}

static unsigned int break_scale_ratio(PVDCTest *t)
{
    pvdc_wr_plane(t, primary0(t), PVDC_PS_DST_SIZE,
                  PVDC_XY(MODE_W / 5, MODE_H));
    return 0;
}

static unsigned int break_zpos_range(PVDCTest *t)
{
    pvdc_write_plane(t, overlay0(t), 0, 0, t->overlays + 2);
    return 0;
}

static unsigned int break_zpos_unique(PVDCTest *t)
{
    pvdc_write_plane(t, overlay0(t), 0, 0, 1);
    pvdc_write_plane(t, pvdc_plane_of(t, 0, OVERLAY(1)), 0, 0, 1);
    return 0;
}

static unsigned int break_scalers(PVDCTest *t)
{
    uint64_t reg = PVDC_PLANE_SHADOW(primary0(t)) + PVDC_PS_DST_SIZE;

    pvdc_wr(t, reg, PVDC_XY(MODE_W / 2, MODE_H / 2));
    pvdc_write_plane(t, overlay0(t), 0, 0, 1);
    pvdc_wr_plane(t, overlay0(t), PVDC_PS_DST_SIZE,
                  PVDC_XY(MODE_W / 2, MODE_H / 2));
    return 0;
}

static unsigned int break_bandwidth(PVDCTest *t)
{
    pvdc_write_plane(t, overlay0(t), 0, 0, 1);
    return 0;
}

static const RuleCase rule_cases[] = {
    { "head-reserved-bits", break_head_reserved, PVDC_ERR_HEAD_RESERVED,
      no_plane },
    { "invalid-mode", break_mode, PVDC_ERR_MODE, no_plane },
    { "color-lut-size-out-of-range", break_color_lut_size, PVDC_ERR_COLOR,
      no_plane },
    { "color-lut-misaligned", break_color_lut_align, PVDC_ERR_COLOR,
      no_plane },
    { "color-matrix-past-vram", break_color_ctm_bounds, PVDC_ERR_COLOR,
      no_plane },
    { "color-on-a-head-being-enabled", break_color_on_enable, PVDC_ERR_COLOR,
      no_plane },
    { "writeback-on-a-disabled-head", break_wb_disabled_head,
      PVDC_ERR_WRITEBACK, no_plane },
    { "writeback-format-not-taken", break_wb_format, PVDC_ERR_WRITEBACK,
      no_plane },
    { "writeback-offset-misaligned", break_wb_offset_align,
      PVDC_ERR_WRITEBACK, no_plane },
    { "writeback-pitch-misaligned", break_wb_pitch_align, PVDC_ERR_WRITEBACK,
      no_plane },
    { "writeback-pitch-smaller-than-a-line", break_wb_pitch_small,
      PVDC_ERR_WRITEBACK, no_plane },
    { "writeback-past-vram", break_wb_bounds, PVDC_ERR_WRITEBACK, no_plane },
    { "writeback-on-a-head-being-enabled", break_wb_on_enable,
      PVDC_ERR_WRITEBACK, no_plane },
    { "connector-past-num-connectors", break_connector_range,
      PVDC_ERR_CONNECTOR, no_plane },
    { "connector-0xffffffff", break_connector_all_ones, PVDC_ERR_CONNECTOR,
      no_plane },
    { "connector-driven-by-an-active-head", break_connector_taken,
      PVDC_ERR_CONNECTOR, no_plane },
    { "timing-change-on-enabled-head", break_modeset_required,
      PVDC_ERR_MODESET_REQUIRED, no_plane },
    { "connector-change-on-enabled-head", break_connector_change,
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
    { "plane-disabled-away-from-the-head-showing-it",
      break_plane_busy_disabled, PVDC_ERR_PLANE_BUSY, overlay0 },
    { "plane-on-disabled-head", break_head_disabled, PVDC_ERR_HEAD_DISABLED,
      primary0 },
    { "plane-left-on-head-being-disabled", break_head_disabled_outside_commit,
      PVDC_ERR_HEAD_DISABLED, overlay0 },
    { "format-not-accepted-by-plane", break_format, PVDC_ERR_FORMAT,
      primary0 },
    { "nv12-on-a-primary-plane", break_format_nv12_primary, PVDC_ERR_FORMAT,
      primary0 },
    { "p010-on-a-cursor-plane", break_format_p010_cursor, PVDC_ERR_FORMAT,
      cursor0 },
    { "color-encoding-3", break_color_encoding, PVDC_ERR_PLANE_CTRL,
      overlay0 },
    { "color-encoding-3-on-an-rgb-plane", break_color_encoding_rgb,
      PVDC_ERR_PLANE_CTRL, primary0 },
    { "misaligned-chroma-offset", break_chroma_offset_align,
      PVDC_ERR_CHROMA, overlay0 },
    { "chroma-pitch-smaller-than-a-line", break_chroma_pitch_small,
      PVDC_ERR_CHROMA, overlay0 },
    { "misaligned-chroma-pitch", break_chroma_pitch_align, PVDC_ERR_CHROMA,
      overlay0 },
    { "chroma-plane-past-vram", break_chroma_bounds, PVDC_ERR_CHROMA,
      overlay0 },
    { "one-chroma-line-pitch-of-2^31", break_chroma_pitch_span,
      PVDC_ERR_CHROMA, overlay0 },
    { "zero-framebuffer-width", break_fb_size, PVDC_ERR_FB_SIZE, primary0 },
    { "odd-yuyv-width", break_fb_size_yuyv_odd, PVDC_ERR_FB_SIZE, overlay0 },
    { "pitch-smaller-than-a-line", break_pitch, PVDC_ERR_PITCH, primary0 },
    { "misaligned-pitch", break_pitch_alignment, PVDC_ERR_PITCH, primary0 },
    { "one-line-pitch-of-2^31", break_pitch_one_line_2g, PVDC_ERR_PITCH,
      primary0 },
    { "pitch-times-height-past-2^31-1", break_pitch_span, PVDC_ERR_PITCH,
      primary0 },
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
    PVDCSnapshot before;
    unsigned int head;
    PVDCTest t;

    pvdc_test_start(&t, RULE_PROPS);
    pvdc_enable_head(&t, 0, CLOCK_1MS);
    (void)pvdc_rd(&t, PVDC_REG_INT_ACK);

    head = rule->breaks(&t);
    pvdc_snapshot_active(&t, &before);
    pvdc_doorbell(&t, head);
    expect = pvdc_result_of(rule->code, rule->plane(&t));
    g_assert_cmphex(pvdc_wait_outcome(&t, head, 2 * SCALE_MS), ==, expect);
    pvdc_assert_active_is(&t, &before);

    status = pvdc_rd(&t, PVDC_REG_INT_STATUS);
    g_assert_cmphex(status, ==, PVDC_INT(head, PVDC_INT_COMMIT_REJECTED));
    pvdc_test_stop(&t);
}

/*
 * The bandwidth a plane needs counts NV12 at 1.5 and P010 at 3 bytes per
 * pixel, exactly: head 0 has 8 KiB left next to its primary plane, an
 * unscaled overlay of w x h pixels fits or not by the exact product.
 */
static void test_ycbcr_bandwidth_is_exact(void)
{
    static const struct {
        uint32_t format, w, h;
        bool fits;
    } fbs[] = {
        { PVDC_FMT_NV12, 80, 68, true },    /* 8160 bytes (2 bpp: 10880) */
        { PVDC_FMT_NV12, 84, 65, true },    /* 8190 bytes */
        { PVDC_FMT_NV12, 80, 70, false },   /* 8400 bytes (1 bpp: 5600) */
        { PVDC_FMT_NV12, 91, 61, false },   /* 8326.5 bytes */
        { PVDC_FMT_P010, 52, 52, true },    /* 8112 bytes (4 bpp: 10816) */
        { PVDC_FMT_P010, 56, 50, false },   /* 8400 bytes (2 bpp: 5600) */
        { PVDC_FMT_P010, 45, 61, false },   /* 8235 bytes */
    };
    unsigned int ov;
    PVDCTest t;

    pvdc_test_start(&t, RULE_PROPS);
    ov = overlay0(&t);
    pvdc_enable_head(&t, 0, CLOCK_1MS);
    for (int i = 0; i < ARRAY_SIZE(fbs); i++) {
        uint32_t w = fbs[i].w, h = fbs[i].h;
        uint32_t bps = 4, expect;

        if (fbs[i].format == PVDC_FMT_NV12) {
            bps = 2;
        }

        pvdc_write_plane(&t, ov, 0, 0, 1);
        pvdc_write_fb(&t, ov, fbs[i].format, 0, ROUND_UP(w * bps / 2, 64), w,
                      h);
        pvdc_wr_plane(&t, ov, PVDC_PS_CHROMA_OFFSET, 1 * MiB);
        pvdc_wr_plane(&t, ov, PVDC_PS_CHROMA_PITCH,
                      ROUND_UP(DIV_ROUND_UP(w, 2) * bps, 64));
        expect = fbs[i].fits ? PVDC_RESULT_APPLIED
                             : pvdc_head_result(PVDC_ERR_BANDWIDTH);
        g_assert_cmphex(pvdc_commit(&t, 0), ==, expect);
        pvdc_wr_plane(&t, ov, PVDC_PS_CTRL, 0);
        g_assert_cmphex(pvdc_commit(&t, 0), ==, PVDC_RESULT_APPLIED);
    }
    pvdc_test_stop(&t);
}

/*
 * The plane windows are PVDC_PLANE_STRIDE (0x80) apart: the chroma
 * registers read back, the reserved rest of a plane's window reads 0 and
 * ignores writes, and nothing spills into the next plane or window.
 */
static void test_plane_window_layout(void)
{
    PVDCSnapshot before, active, now;
    PVDCTest t;

    pvdc_test_start(&t, NULL);
    pvdc_enable_head(&t, 0, CLOCK_1MS);
    pvdc_snapshot_active(&t, &active);
    pvdc_wr_plane(&t, 1, PVDC_PS_CHROMA_OFFSET, 0x12345678);
    pvdc_wr_plane(&t, 1, PVDC_PS_CHROMA_PITCH, 0x9abcdef0);
    g_assert_cmphex(pvdc_rd(&t, PVDC_PLANE_SHADOW(1) + PVDC_PS_CHROMA_OFFSET),
                    ==, 0x12345678);
    g_assert_cmphex(pvdc_rd(&t, PVDC_PLANE_SHADOW(1) + PVDC_PS_CHROMA_PITCH),
                    ==, 0x9abcdef0);
    pvdc_snapshot_shadow(&t, &before);
    for (uint32_t reg = PVDC_PLANE_STATE_REGS * 4; reg < PVDC_PLANE_STRIDE;
         reg += 4) {
        pvdc_wr(&t, PVDC_PLANE_SHADOW(1) + reg, 0xffffffff);
        g_assert_cmphex(pvdc_rd(&t, PVDC_PLANE_SHADOW(1) + reg), ==, 0);
        g_assert_cmphex(pvdc_rd(&t, PVDC_PLANE_ACTIVE(1) + reg), ==, 0);
    }
    /* past the last plane, before the active window */
    pvdc_wr(&t, PVDC_PLANE_SHADOW(t.planes), 0xffffffff);
    g_assert_cmphex(pvdc_rd(&t, PVDC_PLANE_SHADOW(t.planes)), ==, 0);
    pvdc_assert_active_is(&t, &active);
    pvdc_snapshot_shadow(&t, &now);
    g_assert(memcmp(&now, &before, sizeof(now)) == 0);
    /* the windows as the header places them, the last ending below EDID */
    g_assert_cmphex(PVDC_PLANE_SHADOW(PVDC_MAX_PLANES), <=,
                    PVDC_PLANE_ACTIVE_BASE);
    g_assert_cmphex(PVDC_PLANE_ACTIVE(PVDC_MAX_PLANES), <=, PVDC_EDID_BASE);
    g_assert_cmphex(pvdc_rd(&t,
                            PVDC_PLANE_ACTIVE(pvdc_plane_of(&t, 0, PRIMARY)) +
                            PVDC_PS_FORMAT), ==, PVDC_FMT_XRGB8888);
    pvdc_test_stop(&t);
}

/*
 * A disabled head ignores its colour stages, as it does its timings: any
 * value is taken, and read back in the active window.  Enabled, the same
 * values are refused; valid ones on an enabled head are no modeset.
 */
static void test_color_on_disabled_head_is_ignored(void)
{
    static const uint32_t regs[][2] = {
        { PVDC_HS_DEGAMMA_LUT, 0xfffffffc },
        { PVDC_HS_CTM, 0x3 },
        { PVDC_HS_GAMMA_LUT, 0xffffffff },
        { PVDC_HS_LUT_SIZES, PVDC_XY(0, 0xffff) },
        { PVDC_HS_CTRL, PVDC_HS_CTRL_DEGAMMA | PVDC_HS_CTRL_CTM |
                        PVDC_HS_CTRL_GAMMA },
    };
    int64_t t0;
    PVDCTest t;

    pvdc_test_start(&t, RULE_PROPS);
    for (unsigned int i = 0; i < ARRAY_SIZE(regs); i++) {
        pvdc_wr_head(&t, 1, regs[i][0], regs[i][1]);
    }
    g_assert_cmphex(pvdc_commit(&t, 1), ==, PVDC_RESULT_APPLIED);
    for (unsigned int i = 0; i < ARRAY_SIZE(regs); i++) {
        g_assert_cmphex(pvdc_rd(&t, PVDC_HEAD_ACTIVE(1) + regs[i][0]), ==,
                        regs[i][1]);
        g_assert_cmphex(pvdc_rd(&t, PVDC_HEAD_SHADOW(1) + regs[i][0]), ==,
                        regs[i][1]);
    }
    pvdc_write_mode(&t, 1, CLOCK_1MS);
    pvdc_wr_head(&t, 1, PVDC_HS_CTRL, PVDC_HS_CTRL_VALID_MASK);
    g_assert_cmphex(pvdc_commit(&t, 1), ==, pvdc_head_result(PVDC_ERR_COLOR));

    /* turned on and off on an enabled head: applied, timeline kept */
    t0 = pvdc_enable_head(&t, 0, CLOCK_1MS);
    write_color_regs(&t, 0, PVDC_HS_CTRL_DEGAMMA | PVDC_HS_CTRL_CTM |
                     PVDC_HS_CTRL_GAMMA, PVDC_XY(2, 2));
    g_assert_cmphex(pvdc_commit(&t, 0), ==, PVDC_RESULT_APPLIED);
    g_assert_cmphex(pvdc_rd(&t, PVDC_HEAD_ACTIVE(0) + PVDC_HS_CTRL), ==,
                    PVDC_HS_CTRL_ENABLE | PVDC_HS_CTRL_DEGAMMA |
                    PVDC_HS_CTRL_CTM | PVDC_HS_CTRL_GAMMA);
    pvdc_wr_head(&t, 0, PVDC_HS_CTRL, PVDC_HS_CTRL_ENABLE);
    g_assert_cmphex(pvdc_commit(&t, 0), ==, PVDC_RESULT_APPLIED);
    g_assert_cmpuint(pvdc_head_ctl(&t, 0, PVDC_HEAD_VBLANK_COUNT), ==,
                     (pvdc_now_ns(&t) - t0) / PERIOD_1MS);
    pvdc_test_stop(&t);
}

/* A commit breaking several rules reports the first in the documented order. */
static void test_first_broken_rule_is_reported(void)
{
    unsigned int primary, overlay;
    PVDCSnapshot before;
    PVDCTest t;

    pvdc_test_start(&t, RULE_PROPS);
    primary = primary0(&t);
    overlay = overlay0(&t);
    pvdc_enable_head(&t, 0, CLOCK_1MS);
    pvdc_snapshot_active(&t, &before);

    /* MODE, then CONNECTOR, then MODESET_REQUIRED. */
    pvdc_wr_head(&t, 0, PVDC_HS_PIXEL_CLOCK, CLOCK_2MS);
    pvdc_wr_head(&t, 0, PVDC_HS_CONNECTOR, t.heads);
    pvdc_wr_head(&t, 0, PVDC_HS_HSYNC, PVDC_XY(MODE_W - 1, MODE_W + 6));
    pvdc_doorbell(&t, 0);
    g_assert_cmphex(pvdc_wait_outcome(&t, 0, 2 * SCALE_MS), ==,
                    pvdc_head_result(PVDC_ERR_MODE));
    pvdc_wr_head(&t, 0, PVDC_HS_HSYNC, PVDC_XY(MODE_W, MODE_HTOTAL));
    pvdc_doorbell(&t, 0);
    g_assert_cmphex(pvdc_wait_outcome(&t, 0, 2 * SCALE_MS), ==,
                    pvdc_head_result(PVDC_ERR_CONNECTOR));
    pvdc_wr_head(&t, 0, PVDC_HS_CONNECTOR, 0);
    pvdc_doorbell(&t, 0);
    g_assert_cmphex(pvdc_wait_outcome(&t, 0, 2 * SCALE_MS), ==,
                    pvdc_head_result(PVDC_ERR_MODESET_REQUIRED));
    /* CONNECTOR before BANDWIDTH_ALLOC and COLOR, on a head being enabled */
    pvdc_write_mode(&t, 1, CLOCK_1MS);
    pvdc_wr_head(&t, 1, PVDC_HS_CONNECTOR, 0);
    pvdc_wr_head(&t, 1, PVDC_HS_BANDWIDTH, 2 * RULE_HEAD_BANDWIDTH);
    write_color_regs(&t, 1, PVDC_HS_CTRL_GAMMA, PVDC_XY(0, 0));
    pvdc_doorbell(&t, 1);
    g_assert_cmphex(pvdc_wait_outcome(&t, 1, 2 * SCALE_MS), ==,
                    pvdc_head_result(PVDC_ERR_CONNECTOR));
    pvdc_wr_head(&t, 1, PVDC_HS_CONNECTOR, 1);
    pvdc_doorbell(&t, 1);
    g_assert_cmphex(pvdc_wait_outcome(&t, 1, 2 * SCALE_MS), ==,
                    pvdc_head_result(PVDC_ERR_BANDWIDTH_ALLOC));
    pvdc_wr_head(&t, 1, PVDC_HS_CTRL, 0);
    pvdc_wr_head(&t, 0, PVDC_HS_PIXEL_CLOCK, CLOCK_1MS);

    /* Head rules come before plane rules. */
    pvdc_wr_plane(&t, primary, PVDC_PS_FB_PITCH, 4);
    pvdc_wr(&t, PVDC_HEAD_SHADOW(0) + PVDC_HS_BANDWIDTH, 1);
    pvdc_doorbell(&t, 0);
    g_assert_cmphex(pvdc_wait_outcome(&t, 0, 2 * SCALE_MS), ==,
                    pvdc_head_result(PVDC_ERR_BANDWIDTH_CHANGE));
    /* The colour rule is the last head rule. */
    write_color_regs(&t, 0, PVDC_HS_CTRL_GAMMA, PVDC_XY(0, 0));
    pvdc_doorbell(&t, 0);
    g_assert_cmphex(pvdc_wait_outcome(&t, 0, 2 * SCALE_MS), ==,
                    pvdc_head_result(PVDC_ERR_BANDWIDTH_CHANGE));
    pvdc_wr(&t, PVDC_HEAD_SHADOW(0) + PVDC_HS_BANDWIDTH, RULE_HEAD_BANDWIDTH);
    /* Writeback after it. */
    pvdc_wr_head(&t, 0, PVDC_HS_WB_FORMAT, PVDC_FMT_XRGB8888);
    pvdc_wr_head(&t, 0, PVDC_HS_WB_PITCH, 4);
    pvdc_wr_head(&t, 0, PVDC_HS_CTRL, PVDC_HS_CTRL_ENABLE | PVDC_HS_CTRL_GAMMA |
                                 PVDC_HS_CTRL_WRITEBACK);
    pvdc_doorbell(&t, 0);
    g_assert_cmphex(pvdc_wait_outcome(&t, 0, 2 * SCALE_MS), ==,
                    pvdc_head_result(PVDC_ERR_COLOR));
    pvdc_wr_head(&t, 0, PVDC_HS_CTRL, PVDC_HS_CTRL_ENABLE |
                                 PVDC_HS_CTRL_WRITEBACK);
    pvdc_doorbell(&t, 0);
    g_assert_cmphex(pvdc_wait_outcome(&t, 0, 2 * SCALE_MS), ==,
                    pvdc_head_result(PVDC_ERR_WRITEBACK));
    pvdc_wr_head(&t, 0, PVDC_HS_CTRL, PVDC_HS_CTRL_ENABLE);
    pvdc_wr_head(&t, 0, PVDC_HS_LUT_SIZES, 0);
    pvdc_wr_head(&t, 0, PVDC_HS_DEGAMMA_LUT, 0);
    pvdc_wr_head(&t, 0, PVDC_HS_CTM, 0);
    pvdc_wr_head(&t, 0, PVDC_HS_GAMMA_LUT, 0);

    /* Within a plane: PITCH before OFFSET_ALIGN before SRC_RECT. */
    pvdc_wr_plane(&t, primary, PVDC_PS_FB_OFFSET, 2);
    pvdc_wr_plane(&t, primary, PVDC_PS_SRC_W, 0);
    pvdc_doorbell(&t, 0);
    g_assert_cmphex(pvdc_wait_outcome(&t, 0, 2 * SCALE_MS), ==,
                    pvdc_result_of(PVDC_ERR_PITCH, primary));
    pvdc_wr_plane(&t, primary, PVDC_PS_FB_PITCH, MODE_PITCH);
    pvdc_doorbell(&t, 0);
    g_assert_cmphex(pvdc_wait_outcome(&t, 0, 2 * SCALE_MS), ==,
                    pvdc_result_of(PVDC_ERR_OFFSET_ALIGN, primary));

    /* Planes in index order, whatever their rule; sums last. */
    pvdc_write_plane(&t, overlay, 0, 0, 1);
    pvdc_wr_plane(&t, overlay, PVDC_PS_FORMAT, 0);
    pvdc_doorbell(&t, 0);
    g_assert_cmphex(pvdc_wait_outcome(&t, 0, 2 * SCALE_MS), ==,
                    pvdc_result_of(PVDC_ERR_OFFSET_ALIGN, primary));
    pvdc_wr_plane(&t, primary, PVDC_PS_FB_OFFSET, 0);
    pvdc_wr_plane(&t, primary, PVDC_PS_SRC_W, FP16(MODE_W));
    pvdc_doorbell(&t, 0);
    g_assert_cmphex(pvdc_wait_outcome(&t, 0, 2 * SCALE_MS), ==,
                    pvdc_result_of(PVDC_ERR_FORMAT, overlay));
    pvdc_wr_plane(&t, overlay, PVDC_PS_FORMAT, PVDC_FMT_XRGB8888);
    pvdc_doorbell(&t, 0);
    g_assert_cmphex(pvdc_wait_outcome(&t, 0, 2 * SCALE_MS), ==,
                    pvdc_head_result(PVDC_ERR_BANDWIDTH));
    pvdc_assert_active_is(&t, &before);
    pvdc_test_stop(&t);
}

/* The zpos rule compares against planes the commit does not carry, too. */
static void test_zpos_clash_with_plane_outside_commit(void)
{
    PVDCSnapshot before;
    PVDCTest t;

    pvdc_test_start(&t, "heads=2,overlays=2");
    pvdc_enable_head(&t, 0, CLOCK_1MS);
    pvdc_enable_head(&t, 1, CLOCK_1MS);
    /* Overlay 0 of head 0, committed on head 1 at zpos 1. */
    pvdc_write_plane(&t, overlay0(&t), 1, 0, 1);
    pvdc_doorbell(&t, 1);
    g_assert_cmphex(pvdc_wait_outcome(&t, 1, 2 * SCALE_MS), ==,
                    PVDC_RESULT_APPLIED);
    /* Head 1's own overlay at zpos 1 too, committed through head 1. */
    pvdc_write_plane(&t, pvdc_plane_of(&t, 1, OVERLAY(0)), 1, 0, 1);
    pvdc_wr_plane(&t, overlay0(&t), PVDC_PS_HEAD, 0);
    pvdc_wr_plane(&t, overlay0(&t), PVDC_PS_CTRL, 0);
    pvdc_snapshot_active(&t, &before);
    /*
     * Overlay 0 of head 0 now shadows HEAD 0 so it is not in head 1's
     * commit: its active state (enabled, zpos 1 on head 1) clashes.
     */
    pvdc_doorbell(&t, 1);
    g_assert_cmphex(pvdc_wait_outcome(&t, 1, 2 * SCALE_MS), ==,
                    pvdc_result_of(PVDC_ERR_ZPOS,
                                   pvdc_plane_of(&t, 1, OVERLAY(0))));
    pvdc_assert_active_is(&t, &before);
    pvdc_test_stop(&t);
}

/* ------------------------------------------------------------------------ */
/* Heads, groups, modesets                                                  */
/* ------------------------------------------------------------------------ */

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

/* ------------------------------------------------------------------------ */
/* Vblank                                                                   */
/* ------------------------------------------------------------------------ */

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

/* ------------------------------------------------------------------------ */
/* Interrupts                                                               */
/* ------------------------------------------------------------------------ */

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

/* ------------------------------------------------------------------------ */
/* Frame CRCs                                                               */
/* ------------------------------------------------------------------------ */

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

/* ------------------------------------------------------------------------ */
/* Doorbell overrun, reset                                                  */
/* ------------------------------------------------------------------------ */

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
    g_assert_cmphex(pvdc_rd(&t,
                            PVDC_REG_FEATURES) & PVDC_FEATURE_DOORBELL_AMEND,
                    ==, PVDC_FEATURE_DOORBELL_AMEND);
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

static void test_clock_reads_the_virtual_clock(void)
{
    const int64_t later = 5 * NANOSECONDS_PER_SECOND + 123;
    PVDCTest t;

    pvdc_test_start(&t, NULL);
    g_assert_cmphex(pvdc_rd(&t, PVDC_REG_FEATURES) & PVDC_FEATURE_CLOCK, ==,
                    PVDC_FEATURE_CLOCK);
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

    for (i = 0; i < ARRAY_SIZE(plane_cases); i++) {
        uint32_t good =
            pvdc_rd(&t, PVDC_PLANE_SHADOW(primary) + plane_cases[i].reg);

        pvdc_wr_plane(&t, primary, plane_cases[i].reg, plane_cases[i].val);
        pvdc_doorbell(&t, 0);
        g_assert_cmphex(pvdc_wait_outcome(&t, 0, 2 * SCALE_MS), ==,
                        pvdc_result_of(plane_cases[i].code, primary));
        pvdc_assert_active_is(&t, &before);
        pvdc_wr_plane(&t, primary, plane_cases[i].reg, good);
    }

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

/* ------------------------------------------------------------------------ */
/* Connector routing                                                        */
/* ------------------------------------------------------------------------ */

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

    qtest_add_func("/pvdc/pci/identity", test_pci_identity);
    qtest_add_func("/pvdc/caps/follow-properties",
                   test_capabilities_follow_properties);
    qtest_add_func("/pvdc/caps/defaults-follow-heads-and-largest-mode",
                   test_defaults_follow_heads_and_largest_mode);
    qtest_add_func("/pvdc/caps/defaults-show-two-full-screen-planes-per-head",
                   test_defaults_show_two_full_screen_planes_per_head);
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
    qtest_add_func("/pvdc/edid/stays-valid-after-repeated-changes",
                   test_edid_stays_valid_after_repeated_changes);
    qtest_add_func("/pvdc/vram/bar-is-memory", test_vram_bar_is_memory);
    qtest_add_func("/pvdc/vram/bar-is-64-bit-prefetchable",
                   test_vram_bar_is_64_bit_prefetchable);
    qtest_add_func("/pvdc/access/8-byte-access-is-two-32-bit-accesses",
                   test_8_byte_access_is_two_32_bit_accesses);

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
    qtest_add_func("/pvdc/rules/ycbcr-bandwidth-counts-exact-bytes-per-pixel",
                   test_ycbcr_bandwidth_is_exact);
    qtest_add_func("/pvdc/access/plane-windows-are-0x80-apart",
                   test_plane_window_layout);
    qtest_add_func("/pvdc/rules/color-on-a-disabled-head-is-ignored",
                   test_color_on_disabled_head_is_ignored);
    qtest_add_func("/pvdc/rules/first-broken-rule-in-order-is-reported",
                   test_first_broken_rule_is_reported);
    qtest_add_func("/pvdc/rules/zpos-clash-with-plane-outside-commit"
                   "-is-rejected",
                   test_zpos_clash_with_plane_outside_commit);

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

    qtest_add_func("/pvdc/crc/follows-the-active-frame",
                   test_crc_follows_the_active_frame);
    qtest_add_func("/pvdc/doorbell/overrun-keeps-the-armed-commit",
                   test_doorbell_overrun_keeps_the_armed_commit);
    qtest_add_func("/pvdc/doorbell/amend-joins-the-armed-commit",
                   test_amend_joins_the_armed_commit);
    qtest_add_func("/pvdc/doorbell/amend-moves-a-plane-within-its-group",
                   test_amend_moves_a_plane_within_its_group);
    qtest_add_func("/pvdc/clock/reads-the-virtual-clock",
                   test_clock_reads_the_virtual_clock);
    qtest_add_func("/pvdc/reset/during-an-armed-commit-cancels-it",
                   test_reset_during_armed_commit);
    qtest_add_func("/pvdc/hostile/values-are-refused-device-stays-responsive",
                   test_hostile_values_are_refused);

    return g_test_run();
}
