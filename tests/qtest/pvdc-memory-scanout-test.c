/*
 * QTest cases for pvdc planes, writeback targets and colour tables in
 * guest pages bound into the device address space (BIND_*): each shows
 * exactly what the same bytes show from VRAM, in the frame CRC and on the
 * console, composed from copies of scattered pages or shown straight from
 * contiguous ones; with guest RAM in a memfd, through a contiguous host
 * view of scattered pages.  Ranges across bindings are refused, bindings
 * in use are busy, bus mastering off blanks what they show, and they
 * migrate.  Bindings are built with the memory qtest library
 * (pvdc-qtest-memory.h); run under ASan and LeakSanitizer by the
 * qtest-pvdc-memory-scanout-asan suite.
 *
 * Copyright (c) 2026 The pvdc authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "pvdc-qtest-memory.h"

/* ------------------------------------------------------------------------ */
/* Planes scanned out of bindings                                           */
/* ------------------------------------------------------------------------ */

/*
 * One scene, its bytes laid out alike in two buffers: A (the primary, a
 * scaled overlay, a cursor and the Y plane of an NV12 overlay) and B (the
 * NV12 overlay's Cb:Cr plane).  Each is bound from scattered pages, or
 * copied into VRAM at VRAM_A and VRAM_B.  The primary and the overlay
 * span several pages: they are composed from copies of their rows; the
 * cursor lies in one page: it is composed straight from it.
 */
#define A_PAGES             6
#define B_PAGES             2
#define PRI_REL             0
#define OV_REL              (4 * PAGE - 512)    /* across a page */
#define CUR_REL             (4 * PAGE + 1024)
#define NVY_REL             (5 * PAGE)
#define NVC_REL             (PAGE - 256)        /* across a page, in B */
#define VRAM_A              0x200000
#define VRAM_B              0x300000
/* the pages of A and B among Mem.pages */
#define A_FIRST             0
#define B_FIRST             A_PAGES

typedef struct Scene {
    uint8_t a[A_PAGES * PAGE];
    uint8_t b[B_PAGES * PAGE];
} Scene;

/* Write @buf into the pages from @first and into VRAM at @vram. */
static void scene_write(PVDCMem *m, int first, int n, const uint8_t *buf,
                        uint32_t vram)
{
    for (int i = 0; i < n; i++) {
        qtest_memwrite(m->t.qts, pvdc_mem_page_of(m, first, n, i * PAGE),
                       buf + i * PAGE, PAGE);
    }
    qpci_memwrite(m->t.dev, m->t.vram, vram, buf, n * PAGE);
}

static void scene_init(PVDCMem *m, Scene *sc)
{
    g_autoptr(GRand) rng = g_rand_new_with_seed(33);

    for (size_t i = 0; i < sizeof(sc->a); i++) {
        sc->a[i] = g_rand_int(rng);
    }
    for (size_t i = 0; i < sizeof(sc->b); i++) {
        sc->b[i] = g_rand_int(rng);
    }
    scene_write(m, A_FIRST, A_PAGES, sc->a, VRAM_A);
    scene_write(m, B_FIRST, B_PAGES, sc->b, VRAM_B);
    pvdc_wr(&m->t, PVDC_HEAD_CONTROL(0) + PVDC_HEAD_CRC_CTRL,
            PVDC_CRC_CTRL_ENABLE);
}

/*
 * Head 0 shows the scene with A at @a and B at @b, written back into VRAM
 * at @wb unless it is 0; the commit's result.
 */
static uint32_t show_scene_wb(PVDCTest *t, uint32_t a, uint32_t b,
                              uint32_t wb)
{
    unsigned int ov = pvdc_plane_of(t, 0, OVERLAY(0));
    unsigned int nv = pvdc_plane_of(t, 0, OVERLAY(1));
    unsigned int cur = pvdc_cursor_of(t, 0);

    pvdc_write_mode(t, 0, CLOCK_1MS);
    pvdc_wr_head(t, 0, PVDC_HS_BACKGROUND, MEM_BACKGROUND);
    if (wb) {
        pvdc_wr_head(t, 0, PVDC_HS_WB_FORMAT, PVDC_FMT_XRGB8888);
        pvdc_wr_head(t, 0, PVDC_HS_WB_OFFSET, wb);
        pvdc_wr_head(t, 0, PVDC_HS_WB_PITCH, MODE_PITCH);
        pvdc_wr_head(t, 0, PVDC_HS_CTRL,
                     PVDC_HS_CTRL_ENABLE | PVDC_HS_CTRL_WRITEBACK);
    }
    pvdc_write_plane(t, pvdc_plane_of(t, 0, PRIMARY), 0, a + PRI_REL, 0);

    pvdc_wr_plane(t, ov, PVDC_PS_HEAD, 0);
    pvdc_write_fb(t, ov, PVDC_FMT_ARGB8888, a + OV_REL, 64, 16, 16);
    /* cropped: its copy starts past the framebuffer's first byte */
    pvdc_wr_plane(t, ov, PVDC_PS_SRC_X, 0x28000);
    pvdc_wr_plane(t, ov, PVDC_PS_SRC_Y, FP16(3));
    pvdc_wr_plane(t, ov, PVDC_PS_SRC_W, FP16(12));
    pvdc_wr_plane(t, ov, PVDC_PS_SRC_H, FP16(10));
    pvdc_wr_plane(t, ov, PVDC_PS_DST_POS, PVDC_XY(8, 6));
    pvdc_wr_plane(t, ov, PVDC_PS_DST_SIZE, PVDC_XY(40, 30));
    pvdc_wr_plane(t, ov, PVDC_PS_ZPOS, 1);
    pvdc_wr_plane(t, ov, PVDC_PS_ALPHA, 0xffff);
    pvdc_wr_plane(t, ov, PVDC_PS_CTRL, PVDC_PS_CTRL_ENABLE |
                  PVDC_PS_CTRL_FILTER_BILINEAR |
                  PVDC_BLEND_COVERAGE << PVDC_PS_CTRL_BLEND_SHIFT);

    pvdc_wr_plane(t, nv, PVDC_PS_HEAD, 0);
    pvdc_write_fb(t, nv, PVDC_FMT_NV12, a + NVY_REL, 64, 32, 24);
    pvdc_wr_plane(t, nv, PVDC_PS_CHROMA_OFFSET, b + NVC_REL);
    pvdc_wr_plane(t, nv, PVDC_PS_CHROMA_PITCH, 64);
    pvdc_wr_plane(t, nv, PVDC_PS_DST_POS, PVDC_XY(20, 10));
    pvdc_wr_plane(t, nv, PVDC_PS_ZPOS, 2);
    pvdc_wr_plane(t, nv, PVDC_PS_ALPHA, 0xc000);
    pvdc_wr_plane(t, nv, PVDC_PS_CTRL, PVDC_PS_CTRL_ENABLE |
                  PVDC_COLOR_BT709 << PVDC_PS_CTRL_COLOR_ENCODING_SHIFT);

    pvdc_wr_plane(t, cur, PVDC_PS_HEAD, 0);
    pvdc_write_fb(t, cur, PVDC_FMT_ARGB8888, a + CUR_REL, 64, 16, 16);
    pvdc_wr_plane(t, cur, PVDC_PS_DST_POS, PVDC_XY(56, 40));
    pvdc_wr_plane(t, cur, PVDC_PS_ZPOS, 3);
    pvdc_wr_plane(t, cur, PVDC_PS_ALPHA, 0xffff);
    pvdc_wr_plane(t, cur, PVDC_PS_CTRL, PVDC_PS_CTRL_ENABLE |
                  PVDC_BLEND_PREMULTI << PVDC_PS_CTRL_BLEND_SHIFT);
    return pvdc_commit(t, 0);
}

static uint32_t show_scene(PVDCTest *t, uint32_t a, uint32_t b)
{
    return show_scene_wb(t, a, b, 0);
}

/*
 * Fills @len bytes of guest RAM at @pages (and @fb, the test's copy) with
 * a pattern that changes every byte and, through @shift, every line.
 */
static void write_pattern(PVDCMem *m, uint64_t pages, uint8_t *fb,
                          uint32_t len, unsigned int mul, unsigned int shift)
{
    for (uint32_t i = 0; i < len; i++) {
        fb[i] = i * mul + (i >> shift);
    }
    qtest_memwrite(m->t.qts, pages, fb, len);
}

/*
 * Head 0 shows @fb (@pitch bytes a line) straight from the guest RAM at
 * @pages: the picture is its bytes, and a pixel the guest then writes on
 * line @y is shown at once, without a composition.
 */
static void assert_shown_straight(PVDCMem *m, const uint8_t *fb,
                                  uint32_t pitch, uint64_t pages, int y)
{
    uint32_t pixel = cpu_to_le32(0x00654321);
    g_autofree uint32_t *shown = NULL, *written = NULL;
    uint64_t before = pvdc_statistic(m->t.qts, "x-head0-compositions");

    shown = pvdc_screendump_mode(m->t.qts, 0);
    for (int j = 0; j < MODE_H; j++) {
        for (int x = 0; x < MODE_W; x++) {
            g_assert_cmphex(shown[j * MODE_W + x], ==,
                            ldl_le_p(fb + j * pitch + x * 4) & 0xffffff);
        }
    }
    qtest_memwrite(m->t.qts, pages + y * pitch + 9 * 4, &pixel, 4);
    written = pvdc_screendump_mode(m->t.qts, 0);
    g_assert_cmphex(written[y * MODE_W + 9], ==, 0x654321);
    g_assert_cmpuint(pvdc_statistic(m->t.qts, "x-head0-compositions"), ==,
                     before);
}

/* Bind A and B (apart) and show the scene from VRAM: its CRC and picture. */
static uint32_t scene_from_vram(PVDCMem *m, Scene *sc, uint32_t **picture)
{
    uint32_t crc;

    scene_init(m, sc);
    g_assert_cmphex(pvdc_mem_bind_pages(m, m->base, A_FIRST, A_PAGES), ==,
                    PVDC_BIND_OK);
    g_assert_cmphex(pvdc_mem_bind_pages(m, m->base + BUF_PAGES * PAGE, B_FIRST,
                                        B_PAGES), ==, PVDC_BIND_OK);
    g_assert_cmphex(show_scene(&m->t, VRAM_A, VRAM_B), ==,
                    PVDC_RESULT_APPLIED);
    crc = pvdc_crc_now(&m->t);
    g_assert_cmphex(crc, !=, pvdc_mem_background_crc());
    *picture = pvdc_screendump_mode(m->t.qts, 0);
    return crc;
}

/*
 * The scene from VRAM (scene_from_vram()), then from the bindings of A
 * and B, with the same CRC.
 */
static uint32_t scene_from_bindings(PVDCMem *m, Scene *sc, uint32_t **from_vram)
{
    uint32_t crc = scene_from_vram(m, sc, from_vram);

    g_assert_cmphex(show_scene(&m->t, m->base, m->base + BUF_PAGES * PAGE),
                    ==, PVDC_RESULT_APPLIED);
    g_assert_cmphex(pvdc_crc_now(&m->t), ==, crc);
    return crc;
}

/*
 * A primary, a scaled overlay, a cursor and an NV12 overlay whose Cb:Cr
 * plane lies in another binding, each read from scattered guest pages,
 * show exactly what the same bytes show from VRAM: in the frame CRC and
 * on the console.  Guest RAM has no dirty log: the console shows a write
 * into a binding once DAMAGE_LEN reports it, and composes no more.
 */
static void test_planes_scan_out_of_bindings(const void *extra)
{
    g_autofree uint32_t *from_vram = NULL, *from_pages = NULL;
    g_autofree uint32_t *written = NULL;
    g_autofree Scene *sc = g_new0(Scene, 1);
    uint32_t crc, pixel = cpu_to_le32(0x00123456);
    PVDCMem m;

    pvdc_mem_start_with(&m, extra);
    crc = scene_from_bindings(&m, sc, &from_vram);
    from_pages = pvdc_screendump_mode(m.t.qts, 0);
    pvdc_assert_pictures_equal(from_pages, from_vram, 0);

    /*
     * The top-left pixel of the primary, under no other plane: the
     * console shows it once DAMAGE says so; the next frame's CRC at once.
     */
    qtest_memwrite(m.t.qts, pvdc_mem_page_of(&m, A_FIRST, A_PAGES, PRI_REL),
                   &pixel, sizeof(pixel));
    pvdc_step_to_next_vblank(&m.t, 0);
    g_assert_cmphex(pvdc_crc_now(&m.t), !=, crc);
    written = pvdc_screendump_mode(m.t.qts, 0);
    pvdc_assert_pictures_equal(written, from_pages, 0);
    pvdc_damage(&m.t, 0, m.t.vram_size);             /* VRAM: its own log */
    pvdc_damage(&m.t, m.base + PRI_REL + 4, 4);      /* the next pixel */
    g_free(written);
    written = pvdc_screendump_mode(m.t.qts, 0);
    pvdc_assert_pictures_equal(written, from_pages, 0);
    pvdc_damage(&m.t, m.base + PRI_REL, 4);
    g_free(written);
    written = pvdc_screendump_mode(m.t.qts, 0);
    g_assert_cmphex(written[0], ==, 0x123456);
    from_pages[0] = 0x123456;
    pvdc_assert_pictures_equal(written, from_pages, 0);

    /* Past the device address space: clipped, and nothing breaks. */
    pvdc_damage(&m.t, 0xffffff00, UINT32_MAX);
    pvdc_damage(&m.t, m.base, UINT32_MAX);
    g_free(written);
    written = pvdc_screendump_mode(m.t.qts, 0);
    pvdc_assert_pictures_equal(written, from_pages, 0);
    g_assert_cmphex(pvdc_rd(&m.t, PVDC_REG_DAMAGE_ADDR), ==, m.base);
    g_assert_cmphex(pvdc_rd(&m.t, PVDC_REG_DAMAGE_LEN), ==, 0);
    pvdc_mem_stop(&m);
}

/*
 * A head showing one framebuffer unchanged is shown straight from its
 * memory: from a binding too, where its bytes are contiguous in the
 * host (one entry of contiguous guest pages), and it shows what the guest
 * writes there at once.  From scattered pages it is composed, and with
 * bus mastering off it is not shown.
 */
static void test_one_plane_shows_straight_from_a_binding(void)
{
    const uint32_t size = MODE_PITCH * MODE_H;
    g_autofree uint32_t *shown = NULL, *written = NULL, *blank = NULL;
    g_autofree uint8_t *fb = g_malloc(size);
    unsigned int pri;
    uint64_t pages, before;
    PVDCMem m;

    pvdc_mem_start(&m);
    pri = pvdc_plane_of(&m.t, 0, PRIMARY);
    g_assert_cmpuint(size % PAGE, ==, 0);
    pages = guest_alloc(&m.alloc, size);
    g_assert_cmpuint(pages % PAGE, ==, 0);
    write_pattern(&m, pages, fb, size, 7, 8);
    g_assert_cmphex(pvdc_mem_bind_one(&m, m.base, size, pages, size), ==,
                    PVDC_BIND_OK);
    pvdc_write_mode(&m.t, 0, CLOCK_1MS);
    pvdc_write_plane(&m.t, pri, 0, m.base, 0);
    g_assert_cmphex(pvdc_commit(&m.t, 0), ==, PVDC_RESULT_APPLIED);
    assert_shown_straight(&m, fb, MODE_PITCH, pages, 5);

    /* Without bus mastering: composed, without the plane. */
    before = pvdc_statistic(m.t.qts, "x-head0-compositions");
    pvdc_set_bus_master(&m.t, false);
    blank = pvdc_screendump_mode(m.t.qts, 0);
    for (int i = 0; i < MODE_W * MODE_H; i++) {
        g_assert_cmphex(blank[i], ==, 0);
    }
    g_assert_cmpuint(pvdc_statistic(m.t.qts, "x-head0-compositions"), >,
                     before);
    pvdc_set_bus_master(&m.t, true);

    /* The same bytes from scattered pages: composed, the same picture. */
    g_free(shown);
    shown = pvdc_screendump_mode(m.t.qts, 0);
    pvdc_write_plane(&m.t, pri, 0, 0, 0);
    g_assert_cmphex(pvdc_commit(&m.t, 0), ==, PVDC_RESULT_APPLIED);
    g_assert_cmphex(pvdc_unbind_range(&m.t, m.base, size), ==, PVDC_BIND_OK);
    for (int i = 0; i < size / PAGE; i++) {
        g_autofree uint8_t *page = g_malloc(PAGE);

        qtest_memread(m.t.qts, pages + i * PAGE, page, PAGE);
        qtest_memwrite(m.t.qts, m.pages[size / PAGE - 1 - i], page, PAGE);
    }
    g_assert_cmphex(pvdc_mem_bind_pages(&m, m.base, 0, size / PAGE), ==,
                    PVDC_BIND_OK);
    pvdc_write_plane(&m.t, pri, 0, m.base, 0);
    g_assert_cmphex(pvdc_commit(&m.t, 0), ==, PVDC_RESULT_APPLIED);
    before = pvdc_statistic(m.t.qts, "x-head0-compositions");
    g_free(written);
    written = pvdc_screendump_mode(m.t.qts, 0);
    pvdc_assert_pictures_equal(written, shown, 0);
    g_assert_cmpuint(pvdc_statistic(m.t.qts, "x-head0-compositions"), >,
                     before);
    pvdc_mem_stop(&m);
}

/*
 * The bytes the device copies per frame to show a full-screen plane from
 * guest RAM: none when its pages are contiguous in the host (shown
 * straight from them), the framebuffer's bytes per composition when they
 * are scattered.
 */
static void test_bytes_copied_per_frame(void)
{
    const uint32_t size = MODE_PITCH * MODE_H;
    g_autofree uint32_t *a = NULL, *b = NULL;
    uint64_t pages, bytes, frames;
    unsigned int pri;
    PVDCMem m;

    pvdc_mem_start(&m);
    pri = pvdc_plane_of(&m.t, 0, PRIMARY);
    pages = guest_alloc(&m.alloc, size);
    g_assert_cmphex(pvdc_mem_bind_one(&m, m.base, size, pages, size), ==,
                    PVDC_BIND_OK);
    pvdc_write_mode(&m.t, 0, CLOCK_1MS);
    pvdc_write_plane(&m.t, pri, 0, m.base, 0);
    g_assert_cmphex(pvdc_commit(&m.t, 0), ==, PVDC_RESULT_APPLIED);
    bytes = pvdc_statistic(m.t.qts, "x-bounce-bytes");
    a = pvdc_screendump_mode(m.t.qts, 0);
    pvdc_damage(&m.t, m.base, size);
    b = pvdc_screendump_mode(m.t.qts, 0);
    g_assert_cmpuint(pvdc_statistic(m.t.qts, "x-bounce-bytes"), ==, bytes);

    pvdc_write_plane(&m.t, pri, 0, 0, 0);
    g_assert_cmphex(pvdc_commit(&m.t, 0), ==, PVDC_RESULT_APPLIED);
    g_assert_cmphex(pvdc_unbind_range(&m.t, m.base, size), ==, PVDC_BIND_OK);
    g_assert_cmphex(pvdc_mem_bind_pages(&m, m.base, 0, size / PAGE), ==,
                    PVDC_BIND_OK);
    pvdc_write_plane(&m.t, pri, 0, m.base, 0);
    g_assert_cmphex(pvdc_commit(&m.t, 0), ==, PVDC_RESULT_APPLIED);
    g_free(a);
    a = pvdc_screendump_mode(m.t.qts, 0);
    bytes = pvdc_statistic(m.t.qts, "x-bounce-bytes");
    frames = pvdc_statistic(m.t.qts, "x-head0-compositions");
    pvdc_damage(&m.t, m.base, size);
    g_free(b);
    b = pvdc_screendump_mode(m.t.qts, 0);
    frames = pvdc_statistic(m.t.qts, "x-head0-compositions") - frames;
    g_assert_cmpuint(frames, >=, 1);
    g_assert_cmpuint(pvdc_statistic(m.t.qts, "x-bounce-bytes") - bytes, ==,
                     frames * size);
    pvdc_mem_stop(&m);
}

/*
 * With guest RAM in a memfd, a binding of scattered pages (listed in
 * reverse order) is one contiguous host view of them: a full-screen plane
 * is shown straight from it, no byte copied and nothing composed per
 * frame, and a scene of several planes in such bindings is composed with
 * no bounce copy, both exactly as from VRAM.  UNBIND unmaps the view: the
 * same device address bound to other pages shows those.
 */
static void test_memfd_scattered_pages_show_without_copies(void)
{
    const uint32_t size = MODE_PITCH * MODE_H;
    const int n = size / PAGE;
    g_autofree uint32_t *from_vram = NULL, *shown = NULL;
    g_autofree Scene *sc = g_new0(Scene, 1);
    g_autofree uint8_t *fb = g_malloc(size);
    uint64_t bytes, frames;
    unsigned int pri;
    uint32_t crc;
    PVDCMem m;

    pvdc_mem_start_with(&m, MEM_EXTRA_MEMFD);
    pri = pvdc_plane_of(&m.t, 0, PRIMARY);
    g_assert_cmpuint(size % PAGE, ==, 0);
    g_assert_cmpint(2 * n, <=, BUF_PAGES);
    for (uint32_t i = 0; i < size; i++) {
        fb[i] = i * 7 + (i >> 8);
    }
    scene_write(&m, 0, n, fb, 0);
    g_assert_cmphex(pvdc_mem_bind_pages(&m, m.base, 0, n), ==, PVDC_BIND_OK);
    pvdc_write_mode(&m.t, 0, CLOCK_1MS);
    pvdc_write_plane(&m.t, pri, 0, m.base, 0);
    g_assert_cmphex(pvdc_commit(&m.t, 0), ==, PVDC_RESULT_APPLIED);

    bytes = pvdc_statistic(m.t.qts, "x-bounce-bytes");
    frames = pvdc_statistic(m.t.qts, "x-head0-compositions");
    pvdc_mem_assert_shows(&m.t, fb);
    pvdc_damage(&m.t, m.base, size);
    shown = pvdc_screendump_mode(m.t.qts, 0);
    g_assert_cmpuint(pvdc_statistic(m.t.qts, "x-bounce-bytes"), ==, bytes);
    g_assert_cmpuint(pvdc_statistic(m.t.qts, "x-head0-compositions"), ==,
                     frames);

    /* Unbound and bound to other pages: those are shown. */
    pvdc_write_plane(&m.t, pri, 0, 0, 0);
    g_assert_cmphex(pvdc_commit(&m.t, 0), ==, PVDC_RESULT_APPLIED);
    g_assert_cmphex(pvdc_unbind_range(&m.t, m.base, size), ==, PVDC_BIND_OK);
    for (uint32_t i = 0; i < size; i++) {
        fb[i] = ~(i * 5 + (i >> 9));
    }
    scene_write(&m, n, n, fb, 0);
    g_assert_cmphex(pvdc_mem_bind_pages(&m, m.base, n, n), ==, PVDC_BIND_OK);
    pvdc_write_plane(&m.t, pri, 0, m.base, 0);
    g_assert_cmphex(pvdc_commit(&m.t, 0), ==, PVDC_RESULT_APPLIED);
    pvdc_mem_assert_shows(&m.t, fb);
    g_assert_cmpuint(pvdc_statistic(m.t.qts, "x-bounce-bytes"), ==, bytes);
    pvdc_write_plane(&m.t, pri, 0, 0, 0);
    g_assert_cmphex(pvdc_commit(&m.t, 0), ==, PVDC_RESULT_APPLIED);
    g_assert_cmphex(pvdc_unbind_range(&m.t, m.base, size), ==, PVDC_BIND_OK);

    /* Several planes, across pages and bindings: composed, not copied. */
    crc = scene_from_vram(&m, sc, &from_vram);
    bytes = pvdc_statistic(m.t.qts, "x-bounce-bytes");
    frames = pvdc_statistic(m.t.qts, "x-head0-compositions");
    g_assert_cmphex(show_scene(&m.t, m.base, m.base + BUF_PAGES * PAGE), ==,
                    PVDC_RESULT_APPLIED);
    g_assert_cmphex(pvdc_crc_now(&m.t), ==, crc);
    g_free(shown);
    shown = pvdc_screendump_mode(m.t.qts, 0);
    pvdc_assert_pictures_equal(shown, from_vram, 0);
    g_assert_cmpuint(pvdc_statistic(m.t.qts, "x-head0-compositions"), >,
                     frames);
    g_assert_cmpuint(pvdc_statistic(m.t.qts, "x-bounce-bytes"), ==, bytes);
    pvdc_mem_stop(&m);
}

/* ------------------------------------------------------------------------ */
/* Host views of guest RAM in a memfd                                       */
/* ------------------------------------------------------------------------ */

/* The host mappings of guest RAM's memfd in the QEMU of @t. */
static int memfd_mappings(PVDCTest *t)
{
    g_autofree char *path = g_strdup_printf("/proc/%d/maps",
                                            (int)qtest_pid(t->qts));
    g_autofree char *maps = NULL;
    g_auto(GStrv) lines = NULL;
    int n = 0;

    g_assert_true(g_file_get_contents(path, &maps, NULL, NULL));
    lines = g_strsplit(maps, "\n", -1);
    for (int i = 0; lines[i]; i++) {
        n += strstr(lines[i], "/memfd:") != NULL;
    }
    return n;
}

/*
 * A host view maps the binding's pages once, at BIND, and no longer than
 * the binding lives: UNBIND and a reset unmap it, with nothing left
 * behind (LeakSanitizer does not see mappings).
 */
static void test_memfd_host_views_are_unmapped(void)
{
    int before;
    PVDCMem m;

    pvdc_mem_start_with(&m, MEM_EXTRA_MEMFD);
    before = memfd_mappings(&m.t);
    g_assert_cmpint(before, >, 0);
    g_assert_cmphex(pvdc_mem_bind_scattered(&m, m.base), ==, PVDC_BIND_OK);
    g_assert_cmpint(memfd_mappings(&m.t), >, before);
    g_assert_cmphex(pvdc_unbind_range(&m.t, m.base, BUF_PAGES * PAGE), ==,
                    PVDC_BIND_OK);
    g_assert_cmpint(memfd_mappings(&m.t), ==, before);

    g_assert_cmphex(pvdc_mem_bind_scattered(&m, m.base), ==, PVDC_BIND_OK);
    g_assert_cmphex(pvdc_mem_bind_pages(&m, m.base + BUF_PAGES * PAGE, 0, 3),
                    ==, PVDC_BIND_OK);
    g_assert_cmpint(memfd_mappings(&m.t), >, before);
    qtest_system_reset(m.t.qts);
    pvdc_test_detach(&m.t);
    pvdc_test_attach(&m.t, m.t.qts);
    g_assert_cmpuint(pvdc_mem_bindings(&m), ==, 0);
    g_assert_cmpint(memfd_mappings(&m.t), ==, before);
    pvdc_mem_stop(&m);
}

/* More runs than the device maps for host views (PVDC_MAX_VIEW_MAPPINGS) */
#define MANY_RUNS           32768

/*
 * Each run of a host view is a host mapping, of which a process may have
 * only so many: a binding of more runs than the device maps for views
 * (two pages alternating, each entry a run of its own) gets none, and is
 * shown through copies, the host refusing no mapping; once it is unbound
 * a binding of scattered pages has its view again.
 */
static void test_memfd_host_views_are_bounded(void)
{
    const uint32_t size = MODE_PITCH * MODE_H;
    g_autofree uint64_t *e = g_new(uint64_t, 2 * MANY_RUNS);
    g_autofree uint32_t *shown = NULL;
    uint64_t table, bytes;
    unsigned int pri;
    PVDCMem m;

    pvdc_mem_start_with(&m, MEM_EXTRA_MEMFD);
    pri = pvdc_plane_of(&m.t, 0, PRIMARY);
    table = guest_alloc(&m.alloc, MANY_RUNS * PVDC_BIND_ENTRY_SIZE);
    for (int i = 0; i < MANY_RUNS; i++) {
        e[2 * i] = m.pages[i % 2 ? 0 : 2];
        e[2 * i + 1] = PAGE;
    }
    pvdc_write_bind_table(&m.t, table, e, MANY_RUNS);
    g_assert_cmphex(pvdc_bind_range(&m.t, m.base, MANY_RUNS * PAGE, table,
                                    MANY_RUNS), ==, PVDC_BIND_OK);
    pvdc_write_mode(&m.t, 0, CLOCK_1MS);
    pvdc_write_plane(&m.t, pri, 0, m.base, 0);
    g_assert_cmphex(pvdc_commit(&m.t, 0), ==, PVDC_RESULT_APPLIED);
    bytes = pvdc_statistic(m.t.qts, "x-bounce-bytes");
    pvdc_damage(&m.t, m.base, size);
    shown = pvdc_screendump_mode(m.t.qts, 0);
    g_assert_cmpuint(pvdc_statistic(m.t.qts, "x-bounce-bytes") - bytes, >=,
                     size);

    pvdc_write_plane(&m.t, pri, 0, 0, 0);
    g_assert_cmphex(pvdc_commit(&m.t, 0), ==, PVDC_RESULT_APPLIED);
    g_assert_cmphex(pvdc_unbind_range(&m.t, m.base, MANY_RUNS * PAGE), ==,
                    PVDC_BIND_OK);
    g_assert_cmphex(pvdc_mem_bind_pages(&m, m.base, 0, size / PAGE), ==,
                    PVDC_BIND_OK);
    pvdc_write_plane(&m.t, pri, 0, m.base, 0);
    g_assert_cmphex(pvdc_commit(&m.t, 0), ==, PVDC_RESULT_APPLIED);
    bytes = pvdc_statistic(m.t.qts, "x-bounce-bytes");
    pvdc_damage(&m.t, m.base, size);
    g_free(shown);
    shown = pvdc_screendump_mode(m.t.qts, 0);
    g_assert_cmpuint(pvdc_statistic(m.t.qts, "x-bounce-bytes"), ==, bytes);
    pvdc_mem_stop(&m);
}

#define MERGED_PITCH        1024
#define MERGED_LEN          (MERGED_PITCH * MODE_H)

/*
 * Pages contiguous in guest RAM (as hugepages give them) listed one
 * entry each: BIND merges their mappings, so that a head showing one
 * framebuffer across all of them is shown straight from guest RAM, as
 * from one entry, and shows what the guest writes there at once,
 * without composing.
 */
static void test_contiguous_entries_are_merged(void)
{
    const int n = MERGED_LEN / PAGE;
    g_autofree uint64_t *e = g_new(uint64_t, 2 * n);
    g_autofree uint8_t *fb = g_malloc(MERGED_LEN);
    unsigned int pri;
    uint64_t pages;
    PVDCMem m;

    pvdc_mem_start(&m);
    pri = pvdc_plane_of(&m.t, 0, PRIMARY);
    g_assert_cmpuint(MERGED_LEN % PAGE, ==, 0);
    g_assert_cmpint(n, <=, TABLE_ROOM);
    pages = guest_alloc(&m.alloc, MERGED_LEN);
    g_assert_cmpuint(pages % PAGE, ==, 0);
    write_pattern(&m, pages, fb, MERGED_LEN, 13, 9);
    for (int i = 0; i < n; i++) {
        e[2 * i] = pages + i * PAGE;
        e[2 * i + 1] = PAGE;
    }
    pvdc_write_bind_table(&m.t, m.table, e, n);
    g_assert_cmphex(pvdc_bind_range(&m.t, m.base, MERGED_LEN, m.table, n), ==,
                    PVDC_BIND_OK);
    pvdc_write_mode(&m.t, 0, CLOCK_1MS);
    pvdc_write_plane(&m.t, pri, 0, m.base, 0);
    pvdc_wr_plane(&m.t, pri, PVDC_PS_FB_PITCH, MERGED_PITCH);
    g_assert_cmphex(pvdc_commit(&m.t, 0), ==, PVDC_RESULT_APPLIED);
    /* line 40 lies in the 11th page: no DAMAGE_LEN, no composition */
    assert_shown_straight(&m, fb, MERGED_PITCH, pages, 40);
    pvdc_mem_stop(&m);
}

/*
 * A framebuffer or Cb:Cr plane lies wholly in VRAM or wholly in one
 * binding: across the end of VRAM, of a binding, or from one binding
 * into the next, which touches it, it is refused.
 */
static void test_ranges_across_bindings_are_refused(void)
{
    unsigned int pri, nv;
    uint32_t a, b;
    PVDCMem m;

    pvdc_mem_start(&m);
    pri = pvdc_plane_of(&m.t, 0, PRIMARY);
    nv = pvdc_plane_of(&m.t, 0, OVERLAY(1));
    a = m.base;
    b = m.base + A_PAGES * PAGE;
    g_assert_cmphex(pvdc_mem_bind_pages(&m, a, A_FIRST, A_PAGES), ==,
                    PVDC_BIND_OK);
    g_assert_cmphex(pvdc_mem_bind_pages(&m, b, B_FIRST, B_PAGES), ==,
                    PVDC_BIND_OK);

    /* The primary is 3 pages: it ends exactly at the end of A. */
    pvdc_write_mode(&m.t, 0, CLOCK_1MS);
    pvdc_write_plane(&m.t, pri, 0, a + 3 * PAGE, 0);
    g_assert_cmphex(pvdc_commit(&m.t, 0), ==, PVDC_RESULT_APPLIED);
    const uint32_t refused[] = {
        a - PAGE,                       /* VRAM into A */
        a + 3 * PAGE + 64,              /* A into B */
        b,                              /* B and past it */
    };
    for (int i = 0; i < ARRAY_SIZE(refused); i++) {
        g_test_message("primary at 0x%x", refused[i]);
        pvdc_write_plane(&m.t, pri, 0, refused[i], 0);
        g_assert_cmphex(pvdc_commit(&m.t, 0), ==,
                        pvdc_result_of(PVDC_ERR_FB_BOUNDS, pri));
    }
    pvdc_write_plane(&m.t, pri, 0, a + 3 * PAGE, 0);

    /* The Y plane in A, its Cb:Cr plane across A's end into B. */
    pvdc_wr_plane(&m.t, nv, PVDC_PS_HEAD, 0);
    pvdc_write_fb(&m.t, nv, PVDC_FMT_NV12, a + NVY_REL, 64, 32, 24);
    pvdc_wr_plane(&m.t, nv, PVDC_PS_CHROMA_OFFSET, b - 256);
    pvdc_wr_plane(&m.t, nv, PVDC_PS_CHROMA_PITCH, 64);
    pvdc_wr_plane(&m.t, nv, PVDC_PS_ZPOS, 1);
    pvdc_wr_plane(&m.t, nv, PVDC_PS_ALPHA, 0xffff);
    pvdc_wr_plane(&m.t, nv, PVDC_PS_CTRL, PVDC_PS_CTRL_ENABLE);
    g_assert_cmphex(pvdc_commit(&m.t, 0), ==,
                    pvdc_result_of(PVDC_ERR_CHROMA, nv));
    pvdc_wr_plane(&m.t, nv, PVDC_PS_CHROMA_OFFSET, b + NVC_REL);
    g_assert_cmphex(pvdc_commit(&m.t, 0), ==, PVDC_RESULT_APPLIED);
    pvdc_mem_stop(&m);
}

/*
 * What an armed or active state reads never changes under it: BIND and
 * UNBIND of a range it uses are refused, and succeed once it moved away.
 */
static void test_bindings_in_use_are_busy(void)
{
    uint32_t a, c, size = A_PAGES * PAGE;
    unsigned int pri;
    PVDCMem m;

    pvdc_mem_start(&m);
    pri = pvdc_plane_of(&m.t, 0, PRIMARY);
    a = m.base;
    c = m.base + BUF_PAGES * PAGE;
    g_assert_cmphex(pvdc_mem_bind_pages(&m, a, A_FIRST, A_PAGES), ==,
                    PVDC_BIND_OK);
    pvdc_enable_head(&m.t, 0, CLOCK_1MS);

    /* Armed, between the doorbell and the latch point. */
    pvdc_write_plane(&m.t, pri, 0, a, 0);
    pvdc_doorbell(&m.t, 0);
    g_assert_cmpuint(pvdc_head_ctl(&m.t, 0, PVDC_HEAD_DOORBELL), !=, 0);
    g_assert_cmphex(pvdc_unbind_range(&m.t, a, size), ==, PVDC_BIND_ERR_BUSY);
    /* A range it does not read binds and unbinds. */
    g_assert_cmphex(pvdc_mem_bind_pages(&m, c, B_FIRST, B_PAGES), ==,
                    PVDC_BIND_OK);
    g_assert_cmphex(pvdc_unbind_range(&m.t, c, B_PAGES * PAGE), ==,
                    PVDC_BIND_OK);
    g_assert_cmphex(pvdc_wait_outcome(&m.t, 0, NANOSECONDS_PER_SECOND), ==,
                    PVDC_RESULT_APPLIED);
    /* Active. */
    g_assert_cmphex(pvdc_unbind_range(&m.t, a, size), ==, PVDC_BIND_ERR_BUSY);

    /* An armed commit may name a range not bound yet: binding it waits. */
    pvdc_write_plane(&m.t, pri, 0, c, 0);
    pvdc_doorbell(&m.t, 0);
    g_assert_cmphex(pvdc_mem_bind_pages(&m, c + PAGE, B_FIRST, B_PAGES), ==,
                    PVDC_BIND_ERR_BUSY);
    g_assert_cmpuint(pvdc_mem_bindings(&m), ==, 1);
    g_assert_cmphex(pvdc_wait_outcome(&m.t, 0, NANOSECONDS_PER_SECOND), ==,
                    pvdc_result_of(PVDC_ERR_FB_BOUNDS, pri));
    g_assert_cmphex(pvdc_unbind_range(&m.t, a, size), ==, PVDC_BIND_ERR_BUSY);

    /* The state moved back to VRAM: both succeed. */
    pvdc_write_plane(&m.t, pri, 0, 0, 0);
    g_assert_cmphex(pvdc_commit(&m.t, 0), ==, PVDC_RESULT_APPLIED);
    g_assert_cmphex(pvdc_unbind_range(&m.t, a, size), ==, PVDC_BIND_OK);
    g_assert_cmphex(pvdc_mem_bind_pages(&m, c + PAGE, B_FIRST, B_PAGES), ==,
                    PVDC_BIND_OK);
    pvdc_mem_stop(&m);
}

/*
 * Without bus mastering the device reads no guest page: planes in
 * bindings are not shown, as if disabled, and are again once it is back.
 */
static void test_bus_mastering_off_blanks_bound_planes(void)
{
    g_autofree uint32_t *from_vram = NULL, *back = NULL;
    g_autofree Scene *sc = g_new0(Scene, 1);
    uint32_t crc;
    PVDCMem m;

    pvdc_mem_start(&m);
    crc = scene_from_bindings(&m, sc, &from_vram);
    pvdc_set_bus_master(&m.t, false);
    pvdc_step_to_next_vblank(&m.t, 0);
    g_assert_cmphex(pvdc_crc_now(&m.t), ==, pvdc_mem_background_crc());
    pvdc_mem_assert_background(&m.t);
    pvdc_set_bus_master(&m.t, true);
    pvdc_step_to_next_vblank(&m.t, 0);
    g_assert_cmphex(pvdc_crc_now(&m.t), ==, crc);
    back = pvdc_screendump_mode(m.t.qts, 0);
    pvdc_assert_pictures_equal(back, from_vram, 0);
    pvdc_mem_stop(&m);
}

/* Writeback composes planes in bindings as it does planes in VRAM. */
static void test_writeback_of_planes_in_bindings(void)
{
    const uint32_t wb_vram = 0x400000, wb_pages = 0x500000;
    const size_t len = MODE_PITCH * MODE_H;
    g_autofree uint8_t *from_vram = g_malloc(len);
    g_autofree uint8_t *from_pages = g_malloc(len);
    g_autofree Scene *sc = g_new0(Scene, 1);
    PVDCMem m;

    pvdc_mem_start(&m);
    scene_init(&m, sc);
    g_assert_cmphex(pvdc_mem_bind_pages(&m, m.base, A_FIRST, A_PAGES), ==,
                    PVDC_BIND_OK);
    g_assert_cmphex(pvdc_mem_bind_pages(&m, m.base + BUF_PAGES * PAGE, B_FIRST,
                                        B_PAGES), ==, PVDC_BIND_OK);
    g_assert_cmphex(show_scene_wb(&m.t, VRAM_A, VRAM_B, wb_vram), ==,
                    PVDC_RESULT_APPLIED);
    g_assert_cmphex(show_scene_wb(&m.t, m.base, m.base + BUF_PAGES * PAGE,
                                  wb_pages), ==, PVDC_RESULT_APPLIED);
    qpci_memread(m.t.dev, m.t.vram, wb_vram, from_vram, len);
    qpci_memread(m.t.dev, m.t.vram, wb_pages, from_pages, len);
    for (size_t i = 0; i < len; i += 4) {
        /* written (VRAM starts zeroed): the X byte is 0xff */
        g_assert_cmphex(from_vram[i + 3], ==, 0xff);
        g_assert_cmphex(ldl_le_p(from_pages + i), ==,
                        ldl_le_p(from_vram + i));
    }
    pvdc_mem_stop(&m);
}

/*
 * @n pages more, each allocated alone, into @pages; bound in reverse
 * order at @addr, so that none is next to the one before it.
 */
static uint32_t bind_new_pages(PVDCMem *m, uint32_t addr, int n,
                               uint64_t *pages)
{
    uint64_t e[2 * BUF_PAGES];

    g_assert_cmpint(n, <=, BUF_PAGES);
    for (int i = 0; i < n; i++) {
        pages[i] = guest_alloc(&m->alloc, PAGE);
        g_assert_cmpuint(pages[i] % PAGE, ==, 0);
    }
    for (int i = 0; i < n; i++) {
        e[2 * i] = pages[n - 1 - i];
        e[2 * i + 1] = PAGE;
    }
    pvdc_write_bind_table(&m->t, m->table, e, n);
    return pvdc_bind_range(&m->t, addr, n * PAGE, m->table, n);
}

/*
 * Reads, or with @write writes, bytes [@rel, @rel + @len) of the binding
 * of @pages (bind_new_pages()).
 */
static void bound_access(PVDCMem *m, const uint64_t *pages, int n,
                         uint32_t rel, uint8_t *buf, uint32_t len, bool write)
{
    /* Each pass goes up to the end of a page: bounded by @len. */
    while (len) {
        uint32_t k = MIN(len, PAGE - rel % PAGE);
        uint64_t addr = pages[n - 1 - rel / PAGE] + rel % PAGE;

        if (write) {
            qtest_memwrite(m->t.qts, addr, buf, k);
        } else {
            qtest_memread(m->t.qts, addr, buf, k);
        }
        rel += k;
        buf += k;
        len -= k;
    }
}

static void bound_read(PVDCMem *m, const uint64_t *pages, int n, uint32_t rel,
                       uint8_t *buf, uint32_t len)
{
    bound_access(m, pages, n, rel, buf, len, false);
}

static void bound_write(PVDCMem *m, const uint64_t *pages, int n, uint32_t rel,
                        const uint8_t *buf, uint32_t len)
{
    /* Only read from when writing. */
    bound_access(m, pages, n, rel, (uint8_t *)buf, len, true);
}

/* ------------------------------------------------------------------------ */
/* Writeback and colour tables in bindings                                  */
/* ------------------------------------------------------------------------ */

#define WB_LEN              (MODE_PITCH * MODE_H)
#define WB_PAGES            (WB_LEN / PAGE)
#define WB_VRAM             0x400000

/*
 * A writeback target may lie in a binding: the frame is written through
 * its scattered pages, byte for byte what it is in VRAM.  Across the end
 * of the binding it is refused; while it is armed or active its binding
 * is busy; with bus mastering off it is not written, and the commit
 * applies all the same.
 */
static void test_writeback_into_a_binding(const void *extra)
{
    g_autofree uint8_t *from_vram = g_malloc(WB_LEN);
    g_autofree uint8_t *from_pages = g_malloc(WB_LEN);
    g_autofree uint8_t *zero = g_malloc0(WB_LEN);
    g_autofree Scene *sc = g_new0(Scene, 1);
    uint64_t pages[WB_PAGES];
    uint32_t w;
    PVDCMem m;

    pvdc_mem_start_with(&m, extra);
    w = m.base;
    scene_init(&m, sc);
    g_assert_cmpuint(WB_LEN % PAGE, ==, 0);
    g_assert_cmphex(bind_new_pages(&m, w, WB_PAGES, pages), ==,
                    PVDC_BIND_OK);
    g_assert_cmphex(show_scene_wb(&m.t, VRAM_A, VRAM_B, WB_VRAM), ==,
                    PVDC_RESULT_APPLIED);
    qpci_memread(m.t.dev, m.t.vram, WB_VRAM, from_vram, WB_LEN);
    g_assert_cmphex(show_scene_wb(&m.t, VRAM_A, VRAM_B, w), ==,
                    PVDC_RESULT_APPLIED);
    bound_read(&m, pages, WB_PAGES, 0, from_pages, WB_LEN);
    g_assert(memcmp(from_vram, zero, WB_LEN) != 0);
    g_assert(memcmp(from_pages, from_vram, WB_LEN) == 0);

    /* Active, then armed: the binding it writes is busy. */
    g_assert_cmphex(pvdc_unbind_range(&m.t, w, WB_LEN), ==, PVDC_BIND_ERR_BUSY);
    pvdc_wr_head(&m.t, 0, PVDC_HS_WB_OFFSET, WB_VRAM);
    g_assert_cmphex(pvdc_commit(&m.t, 0), ==, PVDC_RESULT_APPLIED);
    pvdc_wr_head(&m.t, 0, PVDC_HS_WB_OFFSET, w);
    pvdc_doorbell(&m.t, 0);
    g_assert_cmpuint(pvdc_head_ctl(&m.t, 0, PVDC_HEAD_DOORBELL), !=, 0);
    g_assert_cmphex(pvdc_unbind_range(&m.t, w, WB_LEN), ==, PVDC_BIND_ERR_BUSY);
    g_assert_cmphex(pvdc_wait_outcome(&m.t, 0, NANOSECONDS_PER_SECOND), ==,
                    PVDC_RESULT_APPLIED);

    /* Past the end of the binding, into the next: refused. */
    g_assert_cmphex(pvdc_mem_bind_pages(&m, w + WB_LEN, A_FIRST, A_PAGES), ==,
                    PVDC_BIND_OK);
    pvdc_wr_head(&m.t, 0, PVDC_HS_WB_OFFSET, w + PAGE);
    g_assert_cmphex(pvdc_commit(&m.t, 0), ==,
                    pvdc_head_result(PVDC_ERR_WRITEBACK));

    /* Bus mastering off: nothing written, the commit applies. */
    bound_write(&m, pages, WB_PAGES, 0, zero, WB_LEN);
    pvdc_set_bus_master(&m.t, false);
    pvdc_wr_head(&m.t, 0, PVDC_HS_WB_OFFSET, w);
    g_assert_cmphex(pvdc_commit(&m.t, 0), ==, PVDC_RESULT_APPLIED);
    bound_read(&m, pages, WB_PAGES, 0, from_pages, WB_LEN);
    g_assert(memcmp(from_pages, zero, WB_LEN) == 0);
    pvdc_set_bus_master(&m.t, true);
    g_assert_cmphex(pvdc_commit(&m.t, 0), ==, PVDC_RESULT_APPLIED);
    bound_read(&m, pages, WB_PAGES, 0, from_pages, WB_LEN);
    g_assert(memcmp(from_pages, from_vram, WB_LEN) == 0);

    /* Moved back to VRAM: the binding is free. */
    pvdc_wr_head(&m.t, 0, PVDC_HS_CTRL, PVDC_HS_CTRL_ENABLE);
    g_assert_cmphex(pvdc_commit(&m.t, 0), ==, PVDC_RESULT_APPLIED);
    g_assert_cmphex(pvdc_unbind_range(&m.t, w, WB_LEN), ==, PVDC_BIND_OK);
    pvdc_mem_stop(&m);
}

/*
 * A writeback into the binding a plane shows is on the console at once,
 * as a writeback into VRAM is: it needs no DAMAGE_LEN from the guest.
 */
static void test_writeback_into_a_shown_binding_shows(void)
{
    g_autofree uint32_t *before = NULL, *after = NULL;
    uint64_t pages[WB_PAGES];
    uint32_t w;
    PVDCMem m;

    pvdc_mem_start(&m);
    w = m.base;
    g_assert_cmphex(bind_new_pages(&m, w, WB_PAGES, pages), ==,
                    PVDC_BIND_OK);
    /* head 1 shows the target; head 0 shows its background */
    pvdc_write_mode(&m.t, 1, CLOCK_1MS);
    pvdc_write_plane(&m.t, pvdc_plane_of(&m.t, 1, PRIMARY), 1, w, 0);
    g_assert_cmphex(pvdc_commit(&m.t, 1), ==, PVDC_RESULT_APPLIED);
    before = pvdc_screendump_mode(m.t.qts, 1);
    g_assert_cmphex(before[0], ==, 0);

    pvdc_write_mode(&m.t, 0, CLOCK_1MS);
    pvdc_wr_plane(&m.t, pvdc_plane_of(&m.t, 0, PRIMARY), PVDC_PS_CTRL, 0);
    pvdc_wr_head(&m.t, 0, PVDC_HS_BACKGROUND, MEM_BACKGROUND);
    pvdc_wr_head(&m.t, 0, PVDC_HS_WB_FORMAT, PVDC_FMT_XRGB8888);
    pvdc_wr_head(&m.t, 0, PVDC_HS_WB_OFFSET, w);
    pvdc_wr_head(&m.t, 0, PVDC_HS_WB_PITCH, MODE_PITCH);
    pvdc_wr_head(&m.t, 0, PVDC_HS_CTRL,
                 PVDC_HS_CTRL_ENABLE | PVDC_HS_CTRL_WRITEBACK);
    g_assert_cmphex(pvdc_commit(&m.t, 0), ==, PVDC_RESULT_APPLIED);
    after = pvdc_screendump_mode(m.t.qts, 1);
    for (int i = 0; i < MODE_W * MODE_H; i++) {
        g_assert_cmphex(after[i], ==, MEM_BACKGROUND);
    }
    pvdc_mem_stop(&m);
}

#define LUT_ENTRIES         256
#define LUT_LEN             (LUT_ENTRIES * PVDC_LUT_ENTRY_SIZE)
#define LUT_REL             (PAGE - LUT_LEN / 2)    /* across a page */
#define CTM_REL             (2 * PAGE - PVDC_CTM_SIZE)  /* ends the binding */
#define VRAM_TABLES         0x600000
#define TABLE_PAGES         2

/* The head's gamma LUT and matrix at @lut and @ctm, both enabled. */
static uint32_t show_colour(PVDCTest *t, uint32_t lut, uint32_t ctm)
{
    pvdc_wr_head(t, 0, PVDC_HS_GAMMA_LUT, lut);
    pvdc_wr_head(t, 0, PVDC_HS_CTM, ctm);
    pvdc_wr_head(t, 0, PVDC_HS_LUT_SIZES, PVDC_XY(LUT_ENTRIES, LUT_ENTRIES));
    pvdc_wr_head(t, 0, PVDC_HS_CTRL, PVDC_HS_CTRL_ENABLE | PVDC_HS_CTRL_CTM |
                 PVDC_HS_CTRL_GAMMA);
    return pvdc_commit(t, 0);
}

/*
 * An inverting gamma LUT, and a matrix of 0 but for 1.0 at the three
 * coefficients @ones (S31.32, row by row).
 */
static void make_colour_tables(uint8_t *lut, uint8_t *ctm, const int ones[3])
{
    for (int i = 0; i < LUT_ENTRIES; i++) {
        uint16_t v = (LUT_ENTRIES - 1 - i) * 0x101;

        stq_le_p(lut + i * PVDC_LUT_ENTRY_SIZE,
                 v | (uint64_t)v << 16 | (uint64_t)v << 32);
    }
    memset(ctm, 0, PVDC_CTM_SIZE);
    for (int i = 0; i < 3; i++) {
        stq_le_p(ctm + ones[i] * 8, 1ULL << 32);
    }
}

/* TABLE_PAGES new pages bound after the scene's buffers: where they are. */
static uint32_t bind_table_pages(PVDCMem *m, uint64_t *pages)
{
    uint32_t c = m->base + 2 * BUF_PAGES * PAGE;

    g_assert_cmphex(bind_new_pages(m, c, TABLE_PAGES, pages), ==,
                    PVDC_BIND_OK);
    return c;
}

/* @lut and @ctm at LUT_REL and CTM_REL of the binding of @pages. */
static void bound_write_tables(PVDCMem *m, const uint64_t *pages,
                               const uint8_t *lut, const uint8_t *ctm)
{
    bound_write(m, pages, TABLE_PAGES, LUT_REL, lut, LUT_LEN);
    bound_write(m, pages, TABLE_PAGES, CTM_REL, ctm, PVDC_CTM_SIZE);
}

/*
 * Colour tables may lie in a binding, across its pages: the head shows
 * what the same tables show from VRAM.  They are copied at the doorbell,
 * so writing the pages afterwards changes nothing; across the end of the
 * binding they are refused; the binding is busy while a state uses them;
 * with bus mastering off at the doorbell they are not read, and their
 * stages are bypassed for that commit.
 */
static void test_colour_tables_in_a_binding(void)
{
    g_autofree uint32_t *plain = NULL, *from_vram = NULL, *shown = NULL;
    g_autofree Scene *sc = g_new0(Scene, 1);
    /* a matrix that swaps red and blue */
    static const int swap_red_blue[3] = { 2, 4, 6 };
    uint8_t lut[LUT_LEN], ctm[PVDC_CTM_SIZE], zero[LUT_LEN] = {};
    uint32_t crc_plain, crc, c;
    uint64_t pages[TABLE_PAGES];
    PVDCMem m;

    make_colour_tables(lut, ctm, swap_red_blue);
    pvdc_mem_start(&m);
    crc_plain = scene_from_vram(&m, sc, &plain);
    c = bind_table_pages(&m, pages);
    qpci_memwrite(m.t.dev, m.t.vram, VRAM_TABLES, lut, LUT_LEN);
    qpci_memwrite(m.t.dev, m.t.vram, VRAM_TABLES + PAGE, ctm, sizeof(ctm));
    g_assert_cmphex(show_colour(&m.t, VRAM_TABLES, VRAM_TABLES + PAGE), ==,
                    PVDC_RESULT_APPLIED);
    crc = pvdc_crc_now(&m.t);
    g_assert_cmphex(crc, !=, crc_plain);
    from_vram = pvdc_screendump_mode(m.t.qts, 0);

    bound_write_tables(&m, pages, lut, ctm);
    g_assert_cmphex(show_colour(&m.t, c + LUT_REL, c + CTM_REL), ==,
                    PVDC_RESULT_APPLIED);
    pvdc_step_to_next_vblank(&m.t, 0);
    g_assert_cmphex(pvdc_crc_now(&m.t), ==, crc);
    shown = pvdc_screendump_mode(m.t.qts, 0);
    pvdc_assert_pictures_equal(shown, from_vram, 0);

    /*
     * Copied at the doorbell: the pages may change between the doorbell
     * and the latch, and after it; the frames do not.
     */
    pvdc_doorbell(&m.t, 0);
    g_assert_cmpuint(pvdc_head_ctl(&m.t, 0, PVDC_HEAD_DOORBELL), !=, 0);
    bound_write_tables(&m, pages, zero, zero);
    g_assert_cmphex(pvdc_wait_outcome(&m.t, 0, NANOSECONDS_PER_SECOND), ==,
                    PVDC_RESULT_APPLIED);
    g_assert_cmphex(pvdc_crc_now(&m.t), ==, crc);
    pvdc_damage(&m.t, c, TABLE_PAGES * PAGE);
    pvdc_step_to_next_vblank(&m.t, 0);
    g_assert_cmphex(pvdc_crc_now(&m.t), ==, crc);

    /* Active: busy.  Armed on a range not bound yet: binding it waits. */
    g_assert_cmphex(pvdc_unbind_range(&m.t, c, TABLE_PAGES * PAGE), ==,
                    PVDC_BIND_ERR_BUSY);
    pvdc_wr_head(&m.t, 0, PVDC_HS_GAMMA_LUT, c + TABLE_PAGES * PAGE);
    pvdc_doorbell(&m.t, 0);
    g_assert_cmphex(pvdc_mem_bind_pages(&m, c + TABLE_PAGES * PAGE, A_FIRST,
                                        1), ==, PVDC_BIND_ERR_BUSY);
    g_assert_cmphex(pvdc_wait_outcome(&m.t, 0, NANOSECONDS_PER_SECOND), ==,
                    pvdc_head_result(PVDC_ERR_COLOR));

    /* Across the end of the binding, into the next: refused. */
    g_assert_cmphex(pvdc_mem_bind_pages(&m, c + TABLE_PAGES * PAGE, A_FIRST,
                                        1), ==, PVDC_BIND_OK);
    g_assert_cmphex(show_colour(&m.t, c + 2 * PAGE - LUT_LEN / 2,
                                c + CTM_REL), ==,
                    pvdc_head_result(PVDC_ERR_COLOR));
    g_assert_cmphex(show_colour(&m.t, c + LUT_REL, c + CTM_REL + 8), ==,
                    pvdc_head_result(PVDC_ERR_COLOR));

    /* Bus mastering off at the doorbell: both stages bypassed. */
    bound_write_tables(&m, pages, lut, ctm);
    pvdc_set_bus_master(&m.t, false);
    g_assert_cmphex(show_colour(&m.t, c + LUT_REL, c + CTM_REL), ==,
                    PVDC_RESULT_APPLIED);
    g_assert_cmphex(pvdc_crc_now(&m.t), ==, crc_plain);
    pvdc_set_bus_master(&m.t, true);
    pvdc_step_to_next_vblank(&m.t, 0);
    g_assert_cmphex(pvdc_crc_now(&m.t), ==, crc_plain);
    g_assert_cmphex(show_colour(&m.t, c + LUT_REL, c + CTM_REL), ==,
                    PVDC_RESULT_APPLIED);
    g_assert_cmphex(pvdc_crc_now(&m.t), ==, crc);

    /* Back in VRAM: the binding is free. */
    g_assert_cmphex(show_colour(&m.t, VRAM_TABLES, VRAM_TABLES + PAGE), ==,
                    PVDC_RESULT_APPLIED);
    g_assert_cmphex(pvdc_unbind_range(&m.t, c, TABLE_PAGES * PAGE), ==,
                    PVDC_BIND_OK);
    pvdc_mem_stop(&m);
}

/*
 * A commit armed with bus mastering off bypasses the colour stages whose
 * tables lie in a binding: a stream carrying that state loads, the
 * destination shows what the source showed, and copies the tables at
 * its next doorbell once bus mastering is on.
 */
static void test_bypassed_colour_stages_migrate(void)
{
    g_autofree uint32_t *plain = NULL;
    g_autofree Scene *sc = g_new0(Scene, 1);
    static const int identity[3] = { 0, 4, 8 };
    uint8_t lut[LUT_LEN], ctm[PVDC_CTM_SIZE];
    uint64_t pages[TABLE_PAGES];
    uint32_t crc_plain, c;
    PVDCTest dst;
    PVDCMem m;

    make_colour_tables(lut, ctm, identity);
    pvdc_mem_start(&m);
    crc_plain = scene_from_vram(&m, sc, &plain);
    c = bind_table_pages(&m, pages);
    bound_write_tables(&m, pages, lut, ctm);
    pvdc_set_bus_master(&m.t, false);
    g_assert_cmphex(show_colour(&m.t, c + LUT_REL, c + CTM_REL), ==,
                    PVDC_RESULT_APPLIED);
    g_assert_cmphex(pvdc_crc_now(&m.t), ==, crc_plain);

    pvdc_test_migrate(&m.t, &dst, MEM_PROPS, MEM_EXTRA);
    pvdc_step_to_next_vblank(&dst, 0);
    g_assert_cmphex(pvdc_crc_now(&dst), ==, crc_plain);
    pvdc_set_bus_master(&dst, true);
    g_assert_cmphex(show_colour(&dst, c + LUT_REL, c + CTM_REL), ==,
                    PVDC_RESULT_APPLIED);
    g_assert_cmphex(pvdc_crc_now(&dst), !=, crc_plain);
    pvdc_test_stop(&dst);
    pvdc_mem_stop(&m);
}

/* The destination scans out of the bindings the stream brings. */
static void test_scanout_of_bindings_migrates(const void *extra)
{
    g_autofree uint32_t *from_vram = NULL, *after = NULL;
    g_autofree Scene *sc = g_new0(Scene, 1);
    uint32_t crc;
    PVDCTest dst;
    PVDCMem m;

    pvdc_mem_start_with(&m, extra);
    crc = scene_from_bindings(&m, sc, &from_vram);

    pvdc_test_migrate(&m.t, &dst, MEM_PROPS, extra);
    pvdc_step_to_next_vblank(&dst, 0);
    g_assert_cmphex(pvdc_crc_now(&dst), ==, crc);
    after = pvdc_screendump_mode(dst.qts, 0);
    pvdc_assert_pictures_equal(after, from_vram, 0);
    g_assert_cmphex(pvdc_unbind_range(&dst, m.base, A_PAGES * PAGE), ==,
                    PVDC_BIND_ERR_BUSY);
    pvdc_test_stop(&dst);
    pvdc_mem_stop(&m);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);

    qtest_add_data_func("/pvdc/memory/planes-scan-out-of-bindings", MEM_EXTRA,
                        test_planes_scan_out_of_bindings);
    qtest_add_func("/pvdc/memory/one-plane-shows-straight-from-a-binding",
                   test_one_plane_shows_straight_from_a_binding);
    qtest_add_func("/pvdc/memory/bytes-copied-per-frame",
                   test_bytes_copied_per_frame);
    qtest_add_func("/pvdc/memory/contiguous-entries-are-merged",
                   test_contiguous_entries_are_merged);
    qtest_add_func("/pvdc/memory/ranges-across-bindings-are-refused",
                   test_ranges_across_bindings_are_refused);
    qtest_add_func("/pvdc/memory/bindings-in-use-are-busy",
                   test_bindings_in_use_are_busy);
    qtest_add_func("/pvdc/memory/bus-mastering-off-blanks-bound-planes",
                   test_bus_mastering_off_blanks_bound_planes);
    qtest_add_func("/pvdc/memory/writeback-of-planes-in-bindings",
                   test_writeback_of_planes_in_bindings);
    qtest_add_data_func("/pvdc/memory/writeback-into-a-binding", MEM_EXTRA,
                        test_writeback_into_a_binding);
    qtest_add_func("/pvdc/memory/writeback-into-a-shown-binding-shows",
                   test_writeback_into_a_shown_binding_shows);
    qtest_add_func("/pvdc/memory/colour-tables-in-a-binding",
                   test_colour_tables_in_a_binding);
    qtest_add_func("/pvdc/memory/bypassed-colour-stages-migrate",
                   test_bypassed_colour_stages_migrate);
    qtest_add_data_func("/pvdc/memory/scanout-of-bindings-migrates", MEM_EXTRA,
                        test_scanout_of_bindings_migrates);
    /* the same from guest RAM in a memfd, through host views */
    qtest_add_data_func("/pvdc/memory/memfd/planes-scan-out-of-bindings",
                        MEM_EXTRA_MEMFD, test_planes_scan_out_of_bindings);
    qtest_add_data_func("/pvdc/memory/memfd/writeback-into-a-binding",
                        MEM_EXTRA_MEMFD, test_writeback_into_a_binding);
    qtest_add_data_func("/pvdc/memory/memfd/scanout-of-bindings-migrates",
                        MEM_EXTRA_MEMFD, test_scanout_of_bindings_migrates);
    qtest_add_func("/pvdc/memory/memfd/scattered-pages-show-without-copies",
                   test_memfd_scattered_pages_show_without_copies);
    qtest_add_func("/pvdc/memory/memfd/host-views-are-unmapped",
                   test_memfd_host_views_are_unmapped);
    qtest_add_func("/pvdc/memory/memfd/host-views-are-bounded",
                   test_memfd_host_views_are_bounded);
    return g_test_run();
}
