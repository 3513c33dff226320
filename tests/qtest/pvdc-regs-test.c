/*
 * QTest cases for pvdc's registers: the PCI identity, the capabilities and
 * the properties they follow, properties a device refuses, the reset values,
 * the EDID, the VRAM BAR and the access sizes the register file takes.
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
    /* Only what a pvdc may lack is a feature bit: this one lacks none. */
    g_assert_cmphex(pvdc_rd(&t, PVDC_REG_FEATURES), ==,
                    PVDC_FEATURE_MSI | PVDC_FEATURE_BOOT_DISPLAY);
    g_assert_cmphex(pvdc_rd(&t, PVDC_REG_VERSION), ==, 1 << 16 | 0);
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
        { NULL, 2, 3, 2, 4096, 2160, 2 * HEAD_KIB_4K, 16 * MiB },
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
 * bandwidth-kib left at 0 gives every head a full-screen primary and
 * overlay at max-width x max-height; vram-size left at 0 is 16 MiB
 * whatever the heads and modes (framebuffers live in guest RAM, and VRAM
 * would take device address space from them); set explicitly, they win.
 */
static void test_bandwidth_follows_the_modes_vram_does_not(void)
{
    static const struct {
        const char *props;
        uint32_t bandwidth;
        uint64_t vram;
    } cases[] = {
        { "heads=1", HEAD_KIB_4K, 16 * MiB },
        { "heads=2", 2 * HEAD_KIB_4K, 16 * MiB },
        { "heads=8", 8 * HEAD_KIB_4K, 16 * MiB },
        { "heads=2,max-width=1920,max-height=1080", 2 * HEAD_KIB_1080P,
          16 * MiB },
        { "heads=1,max-width=64,max-height=64", 2 * 16 + 256, 16 * MiB },
        /* the largest modes too: their buffers need the address space */
        { "heads=8,max-width=8192,max-height=4320",
          8 * (2 * 8192 * 4320 * 4 / KiB + 256), 16 * MiB },
        { "heads=8,vram-size=32M,bandwidth-kib=1000", 1000, 32 * MiB },
        { "heads=1,vram-size=2G", HEAD_KIB_4K, 2 * GiB },
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

        for (j = 0; j < ARRAY_SIZE(pvdc_formats); j++) {
            is_rgb |= table[i] == pvdc_formats[j] && j < PVDC_RGB_FORMATS;
            is_ycbcr |= table[i] == pvdc_formats[j] && j >= PVDC_RGB_FORMATS;
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
    g_assert_cmpuint(ctpop32(overlay), ==, ARRAY_SIZE(pvdc_formats));
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
    { "x-link-up-delay-ms", "5001" },  /* PVDC_MAX_LINK_UP_DELAY_MS + 1 */
    { "x-bind-space", "6000" },         /* not whole pages */
    { "x-bind-space", "4G" },           /* more than the space above VRAM */
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

/*
 * A vram-size set by the user is kept, but QEMU warns when the address
 * space it leaves above VRAM cannot hold what the heads may show: eight
 * 8K heads flipping two full-screen planes need 32 buffers of 126.5 MiB.
 */
static const char *const vram_space_props[] = {
    "heads=8,max-width=7680,max-height=4320,vram-size=2G",
    "heads=8,max-width=7680,max-height=4320,vram-size=32M",
};

static void test_vram_space_subprocess(const void *opaque)
{
    PVDCTest t;

    pvdc_test_start(&t, opaque);
    g_assert_cmpuint(pvdc_rd(&t, PVDC_REG_BIND_SPACE), ==,
                     4 * GiB - t.vram_size);
    pvdc_test_stop(&t);
}

static void test_vram_leaving_too_little_space_warns(void)
{
    for (int i = 0; i < ARRAY_SIZE(vram_space_props); i++) {
        g_autofree char *path =
            g_strdup_printf("/%s/pvdc/properties/vram-space/subprocess/%d",
                            qtest_get_arch(), i);

        g_test_trap_subprocess(path, 60 * G_USEC_PER_SEC, 0);
        g_test_trap_assert_passed();
        if (i == 0) {
            g_test_trap_assert_stderr("*pvdc: vram-size leaves 2048 MiB *"
                                      "need 4050 MiB*");
        } else {
            g_test_trap_assert_stderr_unmatched("*vram-size leaves*");
        }
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

#define EDID_BLOCK          128
#define EDID_EXTENSIONS     126         /* byte of the base block */
#define EDID_EXT_CTA        0x02        /* extension tags */
#define EDID_EXT_DISPLAYID  0x70

/*
 * The EDID of @head as a guest checks it, to @edid: the header, the
 * checksum of the base block and of each extension its count names, the
 * first extension a CTA-861 block, and zeros in the rest of the window.
 * The number of extensions.
 */
static unsigned int read_edid(PVDCTest *t, unsigned int head,
                              uint8_t edid[PVDC_EDID_SIZE])
{
    static const uint8_t header[] = { 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                      0 };
    unsigned int blocks;

    for (int i = 0; i < PVDC_EDID_SIZE; i += 4) {
        stl_le_p(edid + i, pvdc_rd(t, PVDC_EDID(head) + i));
    }
    g_assert(memcmp(edid, header, sizeof(header)) == 0);
    blocks = edid[EDID_EXTENSIONS] + 1;
    g_assert_cmpuint(blocks * EDID_BLOCK, <=, PVDC_EDID_SIZE);
    for (unsigned int b = 0; b < blocks; b++) {
        uint8_t sum = 0;

        for (int i = 0; i < EDID_BLOCK; i++) {
            sum += edid[b * EDID_BLOCK + i];
        }
        g_assert_cmpuint(sum, ==, 0);
    }
    g_assert_cmphex(edid[EDID_BLOCK], ==, EDID_EXT_CTA);
    for (unsigned int i = blocks * EDID_BLOCK; i < PVDC_EDID_SIZE; i++) {
        g_assert_cmphex(edid[i], ==, 0);
    }
    return blocks - 1;
}

static void assert_edid_valid(PVDCTest *t, unsigned int head)
{
    uint8_t edid[PVDC_EDID_SIZE];

    read_edid(t, head, edid);
}

/*
 * A preferred mode 4096 pixels wide or more is not in the base block:
 * QEMU describes it in a DisplayID extension (a detailed timing, type I),
 * which the window holds, at a refresh rate whose pixel clock the device
 * takes.  Smaller modes need no such block.
 */
static void test_edid_has_8k_in_a_displayid_block(void)
{
    uint8_t edid[PVDC_EDID_SIZE];
    const uint8_t *did = edid + 2 * EDID_BLOCK;
    uint32_t clock_khz;
    PVDCTest t;

    pvdc_test_start(&t, "heads=2,max-width=7680,max-height=4320,"
                    "head0-xres=7680,head0-yres=4320");
    g_assert_cmpuint(read_edid(&t, 0, edid), ==, 2);
    g_assert_cmphex(did[0], ==, EDID_EXT_DISPLAYID);
    g_assert_cmphex(did[5], ==, 0x03);          /* detailed timings */
    g_assert_cmpuint(lduw_le_p(did + 12) + 1, ==, 7680);
    g_assert_cmpuint(lduw_le_p(did + 20) + 1, ==, 4320);
    /* 3 bytes, 10 kHz units */
    clock_khz = (did[8] | did[9] << 8 | did[10] << 16) * 10;
    g_assert_cmpuint(clock_khz, <=, PVDC_MAX_PIXEL_CLOCK_KHZ);
    g_assert_cmpuint(clock_khz, >, PVDC_MAX_PIXEL_CLOCK_KHZ * 99 / 100);
    g_assert_cmpuint(read_edid(&t, 1, edid), ==, 1);
    pvdc_test_stop(&t);
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
 * place a large vram-size (up to 2 GiB) above 4 GiB: the harness puts
 * 1 GiB there.
 */
static void test_vram_bar_is_64_bit_prefetchable(void)
{
    PVDCTest t;

    pvdc_test_start(&t, "vram-size=1G");
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
 * Issue 14: with the default bandwidth every head shows a full-screen
 * primary and overlay at the largest mode, double-buffered, and the
 * largest cursor.  The old default (24300 KiB a head) refused it, and one
 * KiB a head less refuses it: the budget is exactly what these planes
 * cost.  Scanned out of VRAM, as here, the buffers need a vram-size that
 * holds them: the default VRAM (16 MiB) does not, and 64 MiB do not for
 * four heads.
 */
static void test_defaults_show_two_full_screen_planes_per_head(void)
{
    static const struct {
        uint32_t heads;
        const char *props;
        uint32_t head_kib;      /* bandwidth-kib / heads, 0: default */
        uint32_t code;
    } cases[] = {
        { 2, ",vram-size=512M", 0, PVDC_RESULT_APPLIED },
        { 4, ",vram-size=1G", 0, PVDC_RESULT_APPLIED },
        { 2, ",vram-size=512M", 24300, PVDC_ERR_BANDWIDTH },
        { 2, ",vram-size=512M", HEAD_KIB_4K - 1, PVDC_ERR_BANDWIDTH },
        { 2, "", 0, PVDC_ERR_FB_BOUNDS },
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
            /* All in VRAM, not past its end. */
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

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);

    qtest_add_func("/pvdc/pci/identity", test_pci_identity);
    qtest_add_func("/pvdc/caps/follow-properties",
                   test_capabilities_follow_properties);
    qtest_add_func("/pvdc/caps/bandwidth-follows-the-modes-vram-does-not",
                   test_bandwidth_follows_the_modes_vram_does_not);
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
    qtest_add_func("/pvdc/properties/vram-leaving-too-little-space-warns",
                   test_vram_leaving_too_little_space_warns);
    for (int i = 0; i < ARRAY_SIZE(vram_space_props); i++) {
        g_autofree char *path =
            g_strdup_printf("/pvdc/properties/vram-space/subprocess/%d", i);

        qtest_add_data_func(path, vram_space_props[i],
                            test_vram_space_subprocess);
    }
    qtest_add_func("/pvdc/reset/values-follow-the-design", test_reset_values);
    qtest_add_func("/pvdc/edid/describes-the-preferred-mode",
                   test_edid_and_connector);
    qtest_add_func("/pvdc/edid/has-8k-in-a-displayid-block",
                   test_edid_has_8k_in_a_displayid_block);
    qtest_add_func("/pvdc/edid/stays-valid-after-repeated-changes",
                   test_edid_stays_valid_after_repeated_changes);
    qtest_add_func("/pvdc/vram/bar-is-memory", test_vram_bar_is_memory);
    qtest_add_func("/pvdc/vram/bar-is-64-bit-prefetchable",
                   test_vram_bar_is_64_bit_prefetchable);
    qtest_add_func("/pvdc/access/8-byte-access-is-two-32-bit-accesses",
                   test_8_byte_access_is_two_32_bit_accesses);
    qtest_add_func("/pvdc/access/plane-windows-are-0x80-apart",
                   test_plane_window_layout);

    return g_test_run();
}
