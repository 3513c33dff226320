/*
 * QTest cases for pvdc and guest RAM itself: RAM that leaves the memory
 * map under a binding (a DIMM the guest ejects), which the device never
 * reads again and a migration refuses, and eight 8K heads shown from
 * bindings of guest RAM above 4 GiB.  Bindings are built with the memory
 * qtest library (pvdc-qtest-memory.h); run under ASan and LeakSanitizer
 * by the qtest-pvdc-memory-ram-asan suite: a mapping left behind by an
 * unplug is reported there.
 *
 * Copyright (c) 2026 The pvdc authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "hw/acpi/pc-hotplug.h"
#include "pvdc-qtest-memory.h"

/* ------------------------------------------------------------------------ */
/* RAM that leaves the memory map                                           */
/* ------------------------------------------------------------------------ */

/* A DIMM of guest RAM besides the 128 MiB, which the guest may eject. */
#define DIMM_EXTRA          MEM_EXTRA ",slots=1,maxmem=1G " \
                            "-object memory-backend-ram,id=dimm-mem," \
                            "size=128M -device pc-dimm,id=dimm,memdev=dimm-mem"
/*
 * ICH9's ACPI memory hotplug registers (docs/specs/acpi_mem_hotplug.rst):
 * the slot selector, and the flags byte whose bit 3 ejects the slot.
 */
#define MEMHP_SELECTOR      0x0
#define MEMHP_FLAGS         0x14
#define MEMHP_EJECT         (1u << 3)

/* The guest address of the DIMM, the machine's only memory device. */
static uint64_t dimm_addr(QTestState *qts)
{
    QDict *rsp = qtest_qmp(qts, "{ 'execute': 'query-memory-devices' }");
    QList *list = qdict_get_qlist(rsp, "return");
    QDict *dev;
    uint64_t addr;

    g_assert_cmpuint(qlist_size(list), ==, 1);
    dev = qobject_to(QDict, qlist_peek(list));
    addr = qdict_get_int(qdict_get_qdict(dev, "data"), "addr");
    qobject_unref(rsp);
    return addr;
}

static unsigned int memory_devices(QTestState *qts)
{
    QDict *rsp = qtest_qmp(qts, "{ 'execute': 'query-memory-devices' }");
    unsigned int n = qlist_size(qdict_get_qlist(rsp, "return"));

    qobject_unref(rsp);
    return n;
}

/*
 * The guest ejects the DIMM through ACPI, as its OS does once it has
 * offlined the memory, and as a hostile guest may do at any time.
 */
static void eject_dimm(QTestState *qts)
{
    qtest_outl(qts, ACPI_MEMORY_HOTPLUG_BASE + MEMHP_SELECTOR, 0);
    qtest_outb(qts, ACPI_MEMORY_HOTPLUG_BASE + MEMHP_FLAGS, MEMHP_EJECT);
}

#define FB_SIZE             (MODE_PITCH * MODE_H)
#define FB_PAGES            (FB_SIZE / PAGE)

/*
 * @fb, a picture, in the DIMM's first pages, bound at m->base (the lost
 * binding to be), and in scattered pages of RAM, bound right after it;
 * head 0 shows the DIMM's, and the guest ejects the DIMM.  Returns the
 * DIMM's address.
 */
static uint64_t eject_shown_dimm(PVDCMem *m, uint8_t *fb)
{
    uint64_t dimm = dimm_addr(m->t.qts);

    g_assert_cmpint(FB_PAGES, <=, BUF_PAGES);
    for (uint32_t i = 0; i < FB_SIZE; i++) {
        fb[i] = i * 7 + (i >> 8);
    }
    qtest_memwrite(m->t.qts, dimm, fb, FB_SIZE);
    for (int i = 0; i < FB_PAGES; i++) {
        qtest_memwrite(m->t.qts, pvdc_mem_page_of(m, 0, FB_PAGES, i * PAGE),
                       fb + i * PAGE, PAGE);
    }
    g_assert_cmphex(pvdc_mem_bind_one(m, m->base, FB_SIZE, dimm, FB_SIZE), ==,
                    PVDC_BIND_OK);
    g_assert_cmphex(pvdc_mem_bind_pages(m, m->base + FB_SIZE, 0, FB_PAGES), ==,
                    PVDC_BIND_OK);
    pvdc_write_mode(&m->t, 0, CLOCK_1MS);
    pvdc_wr_head(&m->t, 0, PVDC_HS_BACKGROUND, MEM_BACKGROUND);
    pvdc_wr(&m->t, PVDC_HEAD_CONTROL(0) + PVDC_HEAD_CRC_CTRL,
            PVDC_CRC_CTRL_ENABLE);
    pvdc_write_plane(&m->t, pvdc_plane_of(&m->t, 0, PRIMARY), 0, m->base, 0);
    g_assert_cmphex(pvdc_commit(&m->t, 0), ==, PVDC_RESULT_APPLIED);
    pvdc_mem_assert_shows(&m->t, fb);

    eject_dimm(m->t.qts);
    g_assert_cmpuint(memory_devices(m->t.qts), ==, 0);
    return dimm;
}

/* Head 0 moves to the binding of RAM, and the lost one is unbound. */
static void move_off_the_lost_binding(PVDCMem *m, const uint8_t *fb)
{
    pvdc_write_plane(&m->t, pvdc_plane_of(&m->t, 0, PRIMARY), 0,
                     m->base + FB_SIZE, 0);
    g_assert_cmphex(pvdc_commit(&m->t, 0), ==, PVDC_RESULT_APPLIED);
    pvdc_mem_assert_shows(&m->t, fb);
    g_assert_cmphex(pvdc_unbind_range(&m->t, m->base, FB_SIZE), ==,
                    PVDC_BIND_OK);
    pvdc_mem_assert_shows(&m->t, fb);
}

/*
 * RAM may leave the memory map under a binding: the guest ejects the
 * DIMM that holds a framebuffer a head shows.  The device never reads
 * it again, nor lets the UI read it: the plane is not shown, the CRC is
 * the background's.  The binding stays, busy while the state names it,
 * until UNBIND releases the memory, which is freed then if its backend
 * was deleted meanwhile.  A binding whose pages stayed RAM shows on.
 */
static void test_ram_unplugged_under_a_binding(void)
{
    g_autofree uint8_t *fb = g_malloc(FB_SIZE);
    uint64_t dimm;
    PVDCMem m;

    pvdc_mem_start_with(&m, DIMM_EXTRA);
    dimm = eject_shown_dimm(&m, fb);
    pvdc_step_to_next_vblank(&m.t, 0);
    g_assert_cmphex(pvdc_crc_now(&m.t), ==, pvdc_mem_background_crc());
    pvdc_mem_assert_background(&m.t);
    /* Its memory outlives the backend while bound; nothing reads it. */
    qtest_qmp_assert_success(m.t.qts, "{ 'execute': 'object-del', "
                             "'arguments': { 'id': 'dimm-mem' } }");
    pvdc_mem_assert_background(&m.t);
    /* No RAM there any more, and the binding is still in use. */
    g_assert_cmphex(pvdc_mem_bind_one(&m, m.base + 2 * FB_SIZE, FB_SIZE, dimm,
                                      FB_SIZE), ==, PVDC_BIND_ERR_DMA);
    g_assert_cmphex(pvdc_unbind_range(&m.t, m.base, FB_SIZE), ==,
                    PVDC_BIND_ERR_BUSY);
    move_off_the_lost_binding(&m, fb);
    pvdc_mem_stop(&m);
}

/*
 * Save @t's machine into @path and load it into a new one, started
 * with @extra (its stderr in @log): whether it loads.  @t goes on.
 * Once per machine: QEMU forgets the file name of a first migration
 * to a file when a second one starts (a leak LeakSanitizer reports).
 */
static bool migrates(PVDCTest *t, const char *extra, const char *path,
                     const char *log)
{
    g_autofree char *uri = g_strdup_printf("file:%s", path);
    g_autofree char *args = g_strdup_printf("%s -incoming defer 2>%s", extra,
                                            log);
    QTestState *dst;
    bool loaded;

    qtest_qmp_assert_success(t->qts, "{ 'execute': 'migrate', "
                             "'arguments': { 'uri': %s } }", uri);
    g_assert_true(pvdc_migration_wait(t->qts));
    qtest_qmp_assert_success(t->qts, "{ 'execute': 'cont' }");
    dst = pvdc_test_spawn(MEM_PROPS, args);
    qtest_qmp_assert_success(dst, "{ 'execute': 'migrate-incoming', "
                             "'arguments': { 'uri': %s, "
                             "'exit-on-error': false } }", uri);
    loaded = pvdc_migration_wait(dst);
    qtest_quit(dst);
    return loaded;
}

/*
 * A machine with a lost binding does not migrate: the destination finds
 * no RAM under its entries and refuses the stream, as BIND would; the
 * source goes on, and migrates once the guest has unbound it (the
 * binding of RAM comes along).
 */
static void test_lost_binding_is_not_loaded(void)
{
    g_autofree uint8_t *fb = g_malloc(FB_SIZE);
    g_autofree char *dir = g_dir_make_tmp("pvdc-memory-XXXXXX", NULL);
    g_autofree char *state = g_build_filename(dir, "state", NULL);
    g_autofree char *log = g_build_filename(dir, "stderr", NULL);
    g_autofree char *err = NULL, *says = NULL;
    const char *extra = MEM_EXTRA ",slots=1,maxmem=1G";
    PVDCTest dst;
    PVDCMem m;

    pvdc_mem_start_with(&m, DIMM_EXTRA);
    eject_shown_dimm(&m, fb);
    qtest_qmp_assert_success(m.t.qts, "{ 'execute': 'object-del', "
                             "'arguments': { 'id': 'dimm-mem' } }");
    g_assert_false(migrates(&m.t, extra, state, log));
    g_assert(g_file_get_contents(log, &err, NULL, NULL));
    says = g_strdup_printf("pvdc: binding 0 at 0x%x+0x%x: status %u",
                           m.base, FB_SIZE, PVDC_BIND_ERR_DMA);
    g_assert_nonnull(strstr(err, says));
    pvdc_mem_assert_background(&m.t);

    move_off_the_lost_binding(&m, fb);
    pvdc_test_migrate(&m.t, &dst, MEM_PROPS, extra);
    g_assert_cmpuint(pvdc_statistic(dst.qts, "x-bindings"), ==, 1);
    pvdc_mem_assert_shows(&dst, fb);
    pvdc_test_stop(&dst);
    unlink(state);
    unlink(log);
    rmdir(dir);
    pvdc_mem_stop(&m);
}

/* ------------------------------------------------------------------------ */
/* Eight heads at 7680x4320 from guest RAM                                  */
/* ------------------------------------------------------------------------ */

/*
 * What a user sets for eight 8K heads (docs/system/devices/pvdc.rst,
 * "Sizing"): the largest mode, nothing else.  The default VRAM is small
 * (framebuffers in guest RAM need none), and the derived bandwidth covers
 * two full-screen planes a head.  q35 puts all RAM past 2 GiB above
 * 4 GiB, where the buffers are (guest RAM costs the host only where
 * written).
 */
#define BIG_PROPS           "heads=8,max-width=7680,max-height=4320"
#define BIG_EXTRA           "-m 6G"
#define BIG_RAM_HIGH        (4 * GiB)
#define BIG_RAM_HIGH_SIZE   (4 * GiB)
#define BIG_HEADS           8
#define BIG_W               7680
#define BIG_H               4320
#define BIG_PITCH           (BIG_W * MODE_CPP)
#define BIG_FB              ((uint64_t)BIG_PITCH * BIG_H)
/* reduced blanking, a frame of exactly 20 ms (50 Hz) */
#define BIG_HTOTAL          7760
#define BIG_VTOTAL          4400
#define BIG_CLOCK           (BIG_HTOTAL * BIG_VTOTAL / 20)
/* the front buffers, then the back buffers a page flip shows */
#define BIG_SETS            2
#define BIG_BUFFERS         (BIG_SETS * BIG_HEADS * 2)
/* a square each buffer shows, at a place and in a colour of its own */
#define PATCH               16

typedef struct BigHead {
    uint32_t x[2], y[2];        /* the primary's square, the overlay's */
    uint32_t argb[2];
} BigHead;

static BigHead big_head(unsigned int set, unsigned int h)
{
    return (BigHead) {
        .x = { 64 + h * 960, BIG_W - 128 - h * 960 },
        .y = { 64 + h * 520 + set * 256, 96 + h * 520 + set * 256 },
        .argb = { 0x00400008 + h * 0x001020 + set * 0x300000,
                  0xff00c000 + h * 0x0a0001 + set * 0x40 },
    };
}

static bool in_patch(const BigHead *b, int k, uint32_t x, uint32_t y)
{
    return x - b->x[k] < PATCH && y - b->y[k] < PATCH;
}

/* Buffer @k (0: primary, 1: overlay) of head @h in @set, in guest RAM. */
static uint64_t big_ram(unsigned int set, unsigned int h, int k)
{
    return BIG_RAM_HIGH + ((set * BIG_HEADS + h) * 2 + k) * BIG_FB;
}

/* The same buffer in the device address space. */
static uint32_t big_addr(PVDCTest *t, unsigned int set, unsigned int h,
                         int k)
{
    return t->vram_size + ((set * BIG_HEADS + h) * 2 + k) * BIG_FB;
}

/* Draw the squares of @set, head @h, and bind its two buffers. */
static void big_bind(PVDCTest *t, uint64_t table, unsigned int set,
                     unsigned int h)
{
    BigHead b = big_head(set, h);
    uint32_t row[PATCH];

    for (int k = 0; k < 2; k++) {
        uint64_t e[2] = { big_ram(set, h, k), BIG_FB };

        for (int i = 0; i < PATCH; i++) {
            row[i] = cpu_to_le32(b.argb[k]);
        }
        for (int y = 0; y < PATCH; y++) {
            qtest_memwrite(t->qts, big_ram(set, h, k) +
                           (uint64_t)(b.y[k] + y) * BIG_PITCH +
                           b.x[k] * MODE_CPP, row, sizeof(row));
        }
        pvdc_write_bind_table(t, table, e, 1);
        g_assert_cmphex(pvdc_bind_range(t, big_addr(t, set, h, k), BIG_FB,
                                        table, 1), ==, PVDC_BIND_OK);
    }
}

/*
 * Head @h in the 8K mode, its primary (XRGB8888) and an overlay
 * (ARGB8888, transparent where the guest did not draw: guest RAM starts
 * zeroed) full-screen, so that both buffers of the head show.
 */
static void big_head_state(PVDCTest *t, unsigned int h)
{
    unsigned int pri = pvdc_plane_of(t, h, PRIMARY);
    unsigned int ov = pvdc_plane_of(t, h, OVERLAY(0));

    pvdc_write_mode_sized(t, h, BIG_W, BIG_H, BIG_HTOTAL, BIG_VTOTAL,
                          BIG_CLOCK);
    pvdc_wr_plane(t, pri, PVDC_PS_HEAD, h);
    pvdc_write_fb(t, pri, PVDC_FMT_XRGB8888, big_addr(t, 0, h, 0), BIG_PITCH,
                  BIG_W, BIG_H);
    pvdc_wr_plane(t, pri, PVDC_PS_ZPOS, 0);
    pvdc_wr_plane(t, pri, PVDC_PS_ALPHA, 0xffff);
    pvdc_wr_plane(t, pri, PVDC_PS_CTRL, PVDC_PS_CTRL_ENABLE);
    pvdc_wr_plane(t, ov, PVDC_PS_HEAD, h);
    pvdc_write_fb(t, ov, PVDC_FMT_ARGB8888, big_addr(t, 0, h, 1), BIG_PITCH,
                  BIG_W, BIG_H);
    pvdc_wr_plane(t, ov, PVDC_PS_ZPOS, 1);
    pvdc_wr_plane(t, ov, PVDC_PS_ALPHA, 0xffff);
    pvdc_wr_plane(t, ov, PVDC_PS_CTRL, PVDC_PS_CTRL_ENABLE |
                  PVDC_BLEND_PREMULTI << PVDC_PS_CTRL_BLEND_SHIFT);
}

/* Commit all heads as one group: each applies. */
static void big_commit(PVDCTest *t)
{
    pvdc_wr(t, PVDC_REG_MULTI_DOORBELL, MAKE_64BIT_MASK(0, BIG_HEADS));
    for (unsigned int h = 0; h < BIG_HEADS; h++) {
        g_assert_cmphex(pvdc_wait_outcome(t, h, NANOSECONDS_PER_SECOND), ==,
                        PVDC_RESULT_APPLIED);
    }
}

/* Console @h shows the buffers of head @h in @set, pixel for pixel. */
static void big_assert_shows(PVDCTest *t, unsigned int set, unsigned int h)
{
    BigHead b = big_head(set, h);
    g_autofree uint32_t *shown = NULL;
    int w, ht;

    g_test_message("head %u, buffers %u", h, set);
    shown = pvdc_screendump(t->qts, h, &w, &ht);
    g_assert_cmpint(w, ==, BIG_W);
    g_assert_cmpint(ht, ==, BIG_H);
    for (uint32_t y = 0; y < BIG_H; y++) {
        for (uint32_t x = 0; x < BIG_W; x++) {
            uint32_t want = in_patch(&b, 1, x, y) ? b.argb[1] :
                            in_patch(&b, 0, x, y) ? b.argb[0] : 0;

            if (shown[y * BIG_W + x] != (want & 0xffffff)) {
                g_error("head %u, pixel (%u, %u): 0x%06x, expected 0x%06x",
                        h, x, y, shown[y * BIG_W + x], want & 0xffffff);
            }
        }
    }
}

/*
 * Eight heads at 7680x4320, each showing two full-screen 32-bit planes
 * double-buffered: 32 buffers of 126.5 MiB, one binding each, in guest
 * RAM above 4 GiB.  With the default VRAM (16 MiB) the 4 GiB device
 * address space holds 32 of them and not one more.  One group commit
 * enables every head, a second flips them all to the back buffers,
 * writing only the planes' offsets; each head shows its own buffers,
 * pixel for pixel.
 */
static void test_eight_8k_heads_scan_out_of_guest_ram(void)
{
    static const unsigned int checked[] = { 0, 3, BIG_HEADS - 1 };
    QGuestAllocator alloc;
    uint64_t table;
    PVDCTest t;

    g_assert_cmpuint(BIG_BUFFERS * BIG_FB, <=, BIG_RAM_HIGH_SIZE);
    g_assert_cmpuint(BIG_FB % PAGE, ==, 0);
    g_assert_cmpuint(BIG_CLOCK, <=, PVDC_MAX_PIXEL_CLOCK_KHZ);
    pvdc_test_start_with(&t, BIG_PROPS, BIG_EXTRA);
    g_assert_cmpuint(t.heads, ==, BIG_HEADS);
    g_assert_cmpuint(pvdc_rd(&t, PVDC_REG_BIND_SPACE), ==,
                     4 * GiB - t.vram_size);
    g_assert_cmphex(pvdc_rd(&t, PVDC_REG_MAX_SIZE), ==, PVDC_XY(BIG_W, BIG_H));
    pc_alloc_init(&alloc, t.qts, ALLOC_NO_FLAGS);
    table = guest_alloc(&alloc, PVDC_BIND_ENTRY_SIZE);

    for (unsigned int set = 0; set < BIG_SETS; set++) {
        for (unsigned int h = 0; h < BIG_HEADS; h++) {
            big_bind(&t, table, set, h);
        }
    }
    g_assert_cmpuint(pvdc_statistic(t.qts, "x-bindings"), ==, BIG_BUFFERS);
    /* A 33rd would end past 2^32. */
    g_assert_cmpuint(t.vram_size + (BIG_BUFFERS + 1) * BIG_FB, >, 4 * GiB);
    g_assert_cmphex(pvdc_bind_range(&t, t.vram_size + BIG_BUFFERS * BIG_FB,
                                    BIG_FB, table, 1), ==, PVDC_BIND_ERR_RANGE);

    for (unsigned int h = 0; h < BIG_HEADS; h++) {
        big_head_state(&t, h);
    }
    big_commit(&t);
    for (int i = 0; i < ARRAY_SIZE(checked); i++) {
        big_assert_shows(&t, 0, checked[i]);
    }

    for (unsigned int h = 0; h < BIG_HEADS; h++) {
        pvdc_wr_plane(&t, pvdc_plane_of(&t, h, PRIMARY), PVDC_PS_FB_OFFSET,
                      big_addr(&t, 1, h, 0));
        pvdc_wr_plane(&t, pvdc_plane_of(&t, h, OVERLAY(0)), PVDC_PS_FB_OFFSET,
                      big_addr(&t, 1, h, 1));
    }
    big_commit(&t);
    for (int i = 0; i < ARRAY_SIZE(checked); i++) {
        big_assert_shows(&t, 1, checked[i]);
    }
    /* The front buffers are shown nowhere now: they unbind. */
    g_assert_cmphex(pvdc_unbind_range(&t, big_addr(&t, 1, 0, 0), BIG_FB), ==,
                    PVDC_BIND_ERR_BUSY);
    g_assert_cmphex(pvdc_unbind_range(&t, big_addr(&t, 0, 0, 0), BIG_FB), ==,
                    PVDC_BIND_OK);
    alloc_destroy(&alloc);
    pvdc_test_stop(&t);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);

    qtest_add_func("/pvdc/memory/ram-unplugged-under-a-binding",
                   test_ram_unplugged_under_a_binding);
    qtest_add_func("/pvdc/memory/lost-binding-is-not-loaded",
                   test_lost_binding_is_not_loaded);
    qtest_add_func("/pvdc/memory/eight-8k-heads-scan-out-of-guest-ram",
                   test_eight_8k_heads_scan_out_of_guest_ram);
    return g_test_run();
}
