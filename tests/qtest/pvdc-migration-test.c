/*
 * QTest cases for pvdc's migration: the state that comes along, and the
 * stream as hostile input.
 *
 * A migration stream is input the destination did not produce: a device
 * configured differently must refuse it with a clear error, and a stream
 * whose pvdc section is changed, field by field or at random, must either
 * fail to load or leave a state that passes every commit rule (checked
 * with the reference model, pvdc-model.c) and that the device then runs
 * without crashing (under ASan and UBSan in the qtest-asan suite).
 *
 * The fields are found in the stream through the JSON description QEMU
 * appends to it (as scripts/analyze-migration.py does), so the test
 * follows the device's VMStateDescription without copying it.
 *
 * Copyright (c) 2026 The pvdc authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/cutils.h"
#include "qapi/error.h"
#include "qobject/qjson.h"
#include "qobject/qlist.h"
#include "pvdc-model.h"

/* QEMU_VM_* of migration/savevm.c: the stream format is stable. */
#define VM_SECTION_FULL     0x04
#define VM_SUBSECTION       0x05
#define VM_VMDESCRIPTION    0x06
#define VM_SECTION_FOOTER   0x7e

#define SOURCE_PROPS        "heads=3,overlays=1,vram-size=16M"

typedef struct Dir {
    char *path;
} Dir;

static char *dir_file(Dir *d, const char *name)
{
    return g_strdup_printf("%s/%s", d->path, name);
}

/* @d and the files a test left in it: streams and QEMU's stderr. */
static void dir_remove(Dir *d)
{
    GDir *dir = g_dir_open(d->path, 0, NULL);
    const char *name;

    g_assert_nonnull(dir);
    while ((name = g_dir_read_name(dir))) {
        g_autofree char *path = dir_file(d, name);

        unlink(path);
    }
    g_dir_close(dir);
    g_assert_cmpint(rmdir(d->path), ==, 0);
    g_free(d->path);
}

/* ------------------------------------------------------------------------ */
/* Moving state                                                             */
/* ------------------------------------------------------------------------ */

/*
 * Overlay 1 of head 0 as an NV12 plane in BT.709 full range, its Cb:Cr
 * plane at @chroma: every plane register in use.
 */
static void write_nv12_overlay(PVDCTest *t, uint32_t chroma)
{
    unsigned int ov = pvdc_plane_of(t, 0, OVERLAY(1));

    pvdc_write_plane(t, ov, 0, 256 * KiB, 2);
    pvdc_write_fb(t, ov, PVDC_FMT_NV12, 256 * KiB, 64, 63, 47);
    pvdc_wr_plane(t, ov, PVDC_PS_CHROMA_OFFSET, chroma);
    pvdc_wr_plane(t, ov, PVDC_PS_CHROMA_PITCH, 128);
    pvdc_wr_plane(t, ov, PVDC_PS_CTRL, PVDC_PS_CTRL_ENABLE |
                  PVDC_COLOR_BT709 << PVDC_PS_CTRL_COLOR_ENCODING_SHIFT |
                  PVDC_PS_CTRL_COLOR_RANGE_FULL);
}

static void test_armed_commit_applies_at_its_vblank(void)
{
    const uint64_t p0 = pvdc_period_ns(CLOCK_1MS);
    const unsigned int nv12 = OVERLAY(1);
    PVDCTest src, dst;
    PVDCSnapshot before, after;
    int64_t t0;

    pvdc_test_start(&src, NULL);
    t0 = pvdc_enable_head(&src, 0, CLOCK_1MS);
    /* active at vblank 1: an NV12 overlay, all 17 registers in use */
    write_nv12_overlay(&src, 512 * KiB);
    g_assert_cmphex(pvdc_commit(&src, 0), ==, PVDC_RESULT_APPLIED);
    (void)pvdc_rd(&src, PVDC_REG_INT_ACK);
    pvdc_step_to(&src, t0 + 2 * p0 + p0 / 3);
    pvdc_wr(&src, PVDC_HEAD_SHADOW(0) + PVDC_HS_BACKGROUND, 0x444444);
    pvdc_write_plane(&src, pvdc_plane_of(&src, 0, OVERLAY(0)), 0, 64 * KiB, 1);
    /* armed: the Cb:Cr plane moves */
    write_nv12_overlay(&src, 768 * KiB);
    pvdc_snapshot_active(&src, &before);
    g_assert_cmphex(before.plane[nv12][PVDC_PS_CHROMA_OFFSET / 4], ==,
                    512 * KiB);
    g_assert_cmphex(before.plane[nv12][PVDC_PS_CHROMA_PITCH / 4], ==, 128);
    pvdc_doorbell(&src, 0);
    pvdc_wr(&src, PVDC_HEAD_SHADOW(0) + PVDC_HS_BACKGROUND, 0x555555);
    pvdc_wr_plane(&src, nv12, PVDC_PS_CHROMA_PITCH, 192);
    pvdc_test_migrate(&src, &dst, NULL, NULL);

    pvdc_assert_active_is(&dst, &before);
    g_assert_cmphex(pvdc_rd(&dst,
                            PVDC_PLANE_SHADOW(nv12) + PVDC_PS_CHROMA_PITCH),
                    ==, 192);
    g_assert_cmpuint(pvdc_head_ctl(&dst, 0, PVDC_HEAD_DOORBELL), ==, 1);
    g_assert_cmpuint(pvdc_head_ctl(&dst, 0, PVDC_HEAD_ARMED_SEQ), ==, 3);
    g_assert_cmphex(pvdc_rd(&dst, PVDC_HEAD_SHADOW(0) + PVDC_HS_BACKGROUND), ==,
                    0x555555);
    pvdc_step_to(&dst, t0 + 3 * p0 - 1);
    pvdc_assert_active_is(&dst, &before);
    pvdc_step_to(&dst, t0 + 3 * p0);
    pvdc_snapshot_active(&dst, &after);
    g_assert_cmphex(after.head[0][PVDC_HS_BACKGROUND / 4], ==, 0x444444);
    g_assert_cmphex(after.plane[pvdc_plane_of(&dst, 0, OVERLAY(0))]
                    [PVDC_PS_FB_OFFSET / 4], ==, 64 * KiB);
    g_assert_cmphex(after.plane[nv12][PVDC_PS_CHROMA_OFFSET / 4], ==,
                    768 * KiB);
    g_assert_cmphex(after.plane[nv12][PVDC_PS_CTRL / 4] >>
                    PVDC_PS_CTRL_COLOR_ENCODING_SHIFT &
                    PVDC_PS_CTRL_COLOR_ENCODING_MASK, ==, PVDC_COLOR_BT709);
    g_assert_cmphex(pvdc_head_ctl(&dst, 0, PVDC_HEAD_RESULT), ==,
                    PVDC_RESULT_APPLIED);
    g_assert_cmpuint(pvdc_head_ctl(&dst, 0, PVDC_HEAD_VBLANK_COUNT), ==, 3);
    g_assert_cmphex(pvdc_rd(&dst, PVDC_REG_INT_STATUS), ==,
                    PVDC_INT(0, PVDC_INT_COMMIT_DONE));

    pvdc_test_stop(&dst);
    pvdc_test_stop(&src);
}

/*
 * An enable armed on the source, migrated before its first vblank, latches
 * on the destination at that very vblank, a frame of its mode after its
 * doorbell, and raises its interrupt there.
 */
static void test_armed_enable_applies_at_its_first_vblank(void)
{
    const uint64_t p1 = pvdc_period_ns(CLOCK_2MS);
    PVDCTest src, dst;
    PVDCSnapshot before;
    int64_t arm;

    pvdc_test_start(&src, NULL);
    pvdc_enable_head(&src, 0, CLOCK_1MS);
    (void)pvdc_rd(&src, PVDC_REG_INT_ACK);
    pvdc_step_to(&src, pvdc_now_ns(&src) + 12345);
    arm = pvdc_now_ns(&src);
    pvdc_write_mode(&src, 1, CLOCK_2MS);
    pvdc_write_plane(&src, pvdc_plane_of(&src, 1, PRIMARY), 1, 0, 0);
    pvdc_snapshot_active(&src, &before);
    pvdc_doorbell(&src, 1);
    pvdc_step_to(&src, arm + p1 / 2);
    pvdc_test_migrate(&src, &dst, NULL, NULL);

    pvdc_assert_active_is(&dst, &before);
    g_assert_cmpuint(pvdc_head_ctl(&dst, 1, PVDC_HEAD_DOORBELL), ==, 1);
    pvdc_step_to(&dst, arm + p1 - 1);
    pvdc_assert_active_is(&dst, &before);
    g_assert_cmphex(pvdc_rd(&dst, PVDC_REG_INT_STATUS), ==, 0);
    pvdc_step_to(&dst, arm + p1);
    g_assert_cmphex(pvdc_rd(&dst, PVDC_REG_INT_STATUS), ==,
                    PVDC_INT(1, PVDC_INT_COMMIT_DONE));
    g_assert_cmphex(pvdc_wait_outcome(&dst, 1, 0), ==, PVDC_RESULT_APPLIED);
    g_assert_cmphex(pvdc_rd(&dst, PVDC_HEAD_ACTIVE(1) + PVDC_HS_CTRL), ==,
                    PVDC_HS_CTRL_ENABLE);
    g_assert_cmpuint(pvdc_head_ctl(&dst, 1, PVDC_HEAD_FRAME_PERIOD), ==, p1);
    g_assert_cmpuint(pvdc_vblank_time(&dst, 1), ==, arm + p1);

    pvdc_test_stop(&dst);
    pvdc_test_stop(&src);
}

/* A 2-entry LUT from white to black at VRAM @offset: inverts a channel. */
static void write_invert_lut(PVDCTest *t, uint32_t offset, bool black)
{
    uint16_t lut[8];

    for (int i = 0; i < 8; i++) {
        lut[i] = cpu_to_le16(black || i >= 4 ? 0 : 0xffff);
    }
    qtest_memwrite(t->qts, t->vram.addr + offset, lut, sizeof(lut));
}

/* The CRC of a head of the test mode showing @pixel everywhere. */
static uint32_t solid_crc(uint32_t pixel)
{
    g_autofree uint32_t *px = g_new(uint32_t, MODE_W * MODE_H);

    for (int i = 0; i < MODE_W * MODE_H; i++) {
        px[i] = pixel;
    }
    return pvdc_frame_crc(px, MODE_W * MODE_H);
}

/*
 * The colour pipeline comes along in the shadow registers, in an armed
 * commit (the tables as copied at its doorbell, not as VRAM holds them
 * now) and in the active state; a reset clears it, and the stream after
 * the reset loads.
 */
static void test_color_pipeline_comes_along(void)
{
    uint32_t white = solid_crc(0xffffff), frame;
    PVDCTest src, dst, dst2;
    int64_t t0;

    pvdc_test_start(&src, NULL);
    for (unsigned int h = 0; h < 2; h++) {
        pvdc_wr(&src, PVDC_HEAD_CONTROL(h) + PVDC_HEAD_CRC_CTRL,
                PVDC_CRC_CTRL_ENABLE);
    }
    /* head 0: VRAM is black, its active GAMMA_LUT shows it white */
    write_invert_lut(&src, 1 * MiB, false);
    pvdc_wr_head(&src, 0, PVDC_HS_GAMMA_LUT, 1 * MiB);
    pvdc_wr_head(&src, 0, PVDC_HS_LUT_SIZES, PVDC_XY(0, 2));
    t0 = pvdc_enable_head(&src, 0, CLOCK_1MS);
    pvdc_wr_head(&src, 0, PVDC_HS_CTRL,
                 PVDC_HS_CTRL_ENABLE | PVDC_HS_CTRL_GAMMA);
    g_assert_cmphex(pvdc_commit(&src, 0), ==, PVDC_RESULT_APPLIED);
    g_assert_cmphex(pvdc_read_crc(&src, 0, &frame), ==, white);
    /* head 1: armed with DEGAMMA_LUT and CTM, the LUT black after it */
    pvdc_enable_head(&src, 1, CLOCK_1MS);
    write_invert_lut(&src, 2 * MiB, false);
    pvdc_wr_head(&src, 1, PVDC_HS_DEGAMMA_LUT, 2 * MiB);
    pvdc_wr_head(&src, 1, PVDC_HS_CTM, 3 * MiB);
    pvdc_wr_head(&src, 1, PVDC_HS_LUT_SIZES, PVDC_XY(2, 0));
    {
        uint64_t ctm[9];

        for (int i = 0; i < 9; i++) {
            ctm[i] = cpu_to_le64(i % 4 ? 0 : 1ull << 32);
        }
        qtest_memwrite(src.qts, src.vram.addr + 3 * MiB, ctm, sizeof(ctm));
    }
    pvdc_wr_head(&src, 1, PVDC_HS_CTRL, PVDC_HS_CTRL_ENABLE |
                 PVDC_HS_CTRL_DEGAMMA | PVDC_HS_CTRL_CTM);
    pvdc_doorbell(&src, 1);
    write_invert_lut(&src, 2 * MiB, true);
    write_invert_lut(&src, 1 * MiB, true);
    /* head 0's shadow: another pipeline, not armed */
    pvdc_wr_head(&src, 0, PVDC_HS_LUT_SIZES, PVDC_XY(7, 9));
    pvdc_wr_head(&src, 0, PVDC_HS_CTRL, PVDC_HS_CTRL_VALID_MASK);
    g_assert_cmpuint(pvdc_head_ctl(&src, 1, PVDC_HEAD_DOORBELL), ==, 1);
    pvdc_test_migrate(&src, &dst, NULL, NULL);
    pvdc_test_stop(&src);

    g_assert_cmphex(pvdc_rd(&dst, PVDC_HEAD_SHADOW(0) + PVDC_HS_LUT_SIZES), ==,
                    PVDC_XY(7, 9));
    g_assert_cmphex(pvdc_rd(&dst, PVDC_HEAD_SHADOW(0) + PVDC_HS_CTRL), ==,
                    PVDC_HS_CTRL_VALID_MASK);
    g_assert_cmphex(pvdc_rd(&dst, PVDC_HEAD_ACTIVE(0) + PVDC_HS_CTRL), ==,
                    PVDC_HS_CTRL_ENABLE | PVDC_HS_CTRL_GAMMA);
    pvdc_step_to_next_vblank(&dst, 0);
    g_assert_cmphex(pvdc_read_crc(&dst, 0, &frame), ==, white);
    g_assert_cmphex(pvdc_head_ctl(&dst, 1, PVDC_HEAD_RESULT), ==,
                    PVDC_RESULT_APPLIED);
    g_assert_cmpuint(pvdc_head_ctl(&dst, 1, PVDC_HEAD_DOORBELL), ==, 0);
    g_assert_cmphex(pvdc_read_crc(&dst, 1, &frame), ==, white);
    g_assert_cmpint(pvdc_now_ns(&dst), >, t0);

    /* reset: no pipeline left behind, in the device nor in a stream */
    qtest_qmp_assert_success(dst.qts, "{ 'execute': 'system_reset' }");
    qtest_qmp_eventwait(dst.qts, "RESET");
    g_assert_cmphex(pvdc_rd(&dst, PVDC_HEAD_ACTIVE(0) + PVDC_HS_CTRL), ==, 0);
    pvdc_test_migrate(&dst, &dst2, NULL, NULL);
    pvdc_test_stop(&dst);
    g_assert_cmphex(pvdc_rd(&dst2, PVDC_HEAD_ACTIVE(0) + PVDC_HS_CTRL), ==, 0);
    pvdc_enable_head(&dst2, 0, CLOCK_1MS);
    pvdc_wr(&dst2, PVDC_HEAD_CONTROL(0) + PVDC_HEAD_CRC_CTRL,
            PVDC_CRC_CTRL_ENABLE);
    g_assert_cmphex(pvdc_read_crc(&dst2, 0, &frame), ==, solid_crc(0));
    pvdc_test_stop(&dst2);
}

/* The writeback target registers of head @h in the window at @base. */
static void assert_wb_regs(PVDCTest *t, uint64_t base, unsigned int h,
                           uint32_t format, uint32_t offset, uint32_t pitch)
{
    uint64_t at = base + h * PVDC_HEAD_STRIDE;

    g_assert_cmphex(pvdc_rd(t, at + PVDC_HS_WB_FORMAT), ==, format);
    g_assert_cmphex(pvdc_rd(t, at + PVDC_HS_WB_OFFSET), ==, offset);
    g_assert_cmphex(pvdc_rd(t, at + PVDC_HS_WB_PITCH), ==, pitch);
}

static void write_wb_regs(PVDCTest *t, unsigned int h, uint32_t format,
                          uint32_t offset, uint32_t pitch)
{
    pvdc_wr_head(t, h, PVDC_HS_WB_FORMAT, format);
    pvdc_wr_head(t, h, PVDC_HS_WB_OFFSET, offset);
    pvdc_wr_head(t, h, PVDC_HS_WB_PITCH, pitch);
}

/*
 * The writeback registers come along in the shadow, armed and active
 * state: an armed commit with WRITEBACK latches after the migration at
 * its vblank and writes its frame then, on the destination.
 */
static void test_writeback_comes_along(void)
{
    uint32_t wb = PVDC_HS_CTRL_ENABLE | PVDC_HS_CTRL_WRITEBACK;
    PVDCTest src, dst;

    pvdc_test_start(&src, NULL);
    pvdc_enable_head(&src, 0, CLOCK_1MS);
    write_wb_regs(&src, 0, PVDC_FMT_XRGB8888, 4 * MiB, MODE_PITCH);
    pvdc_wr_head(&src, 0, PVDC_HS_CTRL, wb);
    g_assert_cmphex(pvdc_commit(&src, 0), ==, PVDC_RESULT_APPLIED);
    write_wb_regs(&src, 0, PVDC_FMT_XBGR8888, 6 * MiB, 8 * MODE_PITCH);
    pvdc_wr_head(&src, 0, PVDC_HS_CTRL, PVDC_HS_CTRL_ENABLE);
    /* head 1 armed: its target is written after the migration */
    pvdc_enable_head(&src, 1, CLOCK_2MS);
    write_wb_regs(&src, 1, PVDC_FMT_ABGR8888, 5 * MiB, MODE_PITCH + 64);
    pvdc_wr_head(&src, 1, PVDC_HS_CTRL, wb);
    pvdc_doorbell(&src, 1);
    g_assert_cmpuint(pvdc_head_ctl(&src, 1, PVDC_HEAD_DOORBELL), ==, 1);
    qtest_memset(src.qts, src.vram.addr + 5 * MiB, 0, 64 * KiB);
    pvdc_test_migrate(&src, &dst, NULL, NULL);
    pvdc_test_stop(&src);

    assert_wb_regs(&dst, PVDC_HEAD_SHADOW_BASE, 0, PVDC_FMT_XBGR8888,
                   6 * MiB, 8 * MODE_PITCH);
    assert_wb_regs(&dst, PVDC_HEAD_ACTIVE_BASE, 0, PVDC_FMT_XRGB8888,
                   4 * MiB, MODE_PITCH);
    g_assert_cmphex(pvdc_rd(&dst, PVDC_HEAD_ACTIVE(0) + PVDC_HS_CTRL), ==, wb);
    g_assert_cmpuint(pvdc_head_ctl(&dst, 1, PVDC_HEAD_DOORBELL), ==, 1);
    g_assert_cmphex(qtest_readl(dst.qts, dst.vram.addr + 5 * MiB), ==, 0);
    pvdc_step_to_next_vblank(&dst, 1);
    g_assert_cmphex(pvdc_head_ctl(&dst, 1, PVDC_HEAD_RESULT), ==,
                    PVDC_RESULT_APPLIED);
    assert_wb_regs(&dst, PVDC_HEAD_ACTIVE_BASE, 1, PVDC_FMT_ABGR8888,
                   5 * MiB, MODE_PITCH + 64);
    g_assert_cmphex(pvdc_rd(&dst, PVDC_HEAD_ACTIVE(1) + PVDC_HS_CTRL), ==, wb);
    /* the primary shows black VRAM: opaque black */
    g_assert_cmphex(qtest_readl(dst.qts, dst.vram.addr + 5 * MiB), ==,
                    0xff000000);
    pvdc_test_stop(&dst);
}

/* The status of the migration of @qts and its dirty-bitmap syncs. */
static char *migration_status(QTestState *qts, int64_t *syncs)
{
    QDict *rsp = qtest_qmp(qts, "{ 'execute': 'query-migrate' }");
    QDict *ret = qdict_get_qdict(rsp, "return");
    QDict *ram = qdict_get_qdict(ret, "ram");
    char *status = g_strdup(qdict_get_try_str(ret, "status"));

    *syncs = ram ? qdict_get_try_int(ram, "dirty-sync-count", 0) : 0;
    qobject_unref(rsp);
    return status;
}

#define WB_SLOTS        16
#define WB_SLOT_SIZE    (MODE_PITCH * MODE_H)
#define WB_SLOTS_AT     (1 * MiB)

#define WB_VRAM_SIZE    (64 * MiB)
/* guest pages of the bound slots, and their BIND table */
#define WB_GUEST_PAGES  (32 * MiB)
#define WB_TABLE        (1 * MiB)
#define WB_BOUND_PAGES  (WB_SLOTS * WB_SLOT_SIZE / PVDC_BIND_PAGE_SIZE)

/*
 * Bind the slots at WB_VRAM_SIZE to guest pages from WB_GUEST_PAGES on,
 * in reverse order; returns where slot 0 is in the device address space.
 */
static uint32_t bind_wb_slots(PVDCTest *t)
{
    g_autofree uint64_t *e = g_new(uint64_t, 2 * WB_BOUND_PAGES);

    g_assert_cmpuint(WB_SLOTS * WB_SLOT_SIZE % PVDC_BIND_PAGE_SIZE, ==, 0);
    for (unsigned int i = 0; i < WB_BOUND_PAGES; i++) {
        e[2 * i] = WB_GUEST_PAGES +
                   (WB_BOUND_PAGES - 1 - i) * PVDC_BIND_PAGE_SIZE;
        e[2 * i + 1] = PVDC_BIND_PAGE_SIZE;
    }
    pvdc_write_bind_table(t, WB_TABLE, e, WB_BOUND_PAGES);
    g_assert_cmphex(pvdc_bind_range(t, WB_VRAM_SIZE,
                                    WB_SLOTS * WB_SLOT_SIZE, WB_TABLE,
                                    WB_BOUND_PAGES), ==, PVDC_BIND_OK);
    return WB_VRAM_SIZE;
}

/* Slot @i, WB_SLOT_SIZE bytes, as written into VRAM or bound pages. */
static void read_wb_slot(PVDCTest *t, bool bound, unsigned int i,
                         uint8_t *buf)
{
    const uint32_t page = PVDC_BIND_PAGE_SIZE;

    if (!bound) {
        qtest_memread(t->qts, t->vram.addr + WB_SLOTS_AT + i * WB_SLOT_SIZE,
                      buf, WB_SLOT_SIZE);
        return;
    }
    for (uint32_t rel = 0; rel < WB_SLOT_SIZE; rel += page) {
        uint32_t n = (i * WB_SLOT_SIZE + rel) / page;

        qtest_memread(t->qts, WB_GUEST_PAGES +
                      (uint64_t)(WB_BOUND_PAGES - 1 - n) * page,
                      buf + rel, MIN(page, WB_SLOT_SIZE - rel));
    }
}

/*
 * Writebacks made while a precopy migration runs all reach the
 * destination: the device marks the pages it writes dirty, and the passes
 * that follow send them again.  The guest writes its frame back every
 * vblank, into one of 16 slots in turn, each frame a colour of its own,
 * while a slow migration (16 MiB/s, with 48 MiB of VRAM to send) makes
 * passes over the dirty pages; it stops before the device state goes
 * (pause-before-switchover: the source runs nothing after that, as a
 * stopped VM's vCPUs cannot).  Then each slot of the destination holds
 * the last frame written into it on the source.  The slots lie in VRAM,
 * or (@bound) in a binding of scattered guest pages, which the device
 * keeps mapped: its writes must reach the dirty log all the same.
 */
static void writebacks_during_precopy_arrive(bool bound)
{
    g_autofree char *dir = g_dir_make_tmp("pvdc-migrate-XXXXXX", NULL);
    g_autofree char *sock = g_strdup_printf("%s/migrate", dir);
    g_autofree char *uri = g_strdup_printf("unix:%s", sock);
    g_autofree char *args = g_strdup_printf("-incoming %s", uri);
    g_autofree uint8_t *src_slot = g_malloc(WB_SLOT_SIZE);
    g_autofree uint8_t *dst_slot = g_malloc(WB_SLOT_SIZE);
    uint32_t last[WB_SLOTS] = { 0 };
    unsigned int frames = 0, during = 0;
    int64_t syncs = 0;
    PVDCTest src, dst;
    QTestState *qts;
    uint32_t slots = WB_SLOTS_AT;

    pvdc_test_start(&src, "heads=1,vram-size=64M");
    if (bound) {
        slots = bind_wb_slots(&src);
    }
    pvdc_enable_head(&src, 0, CLOCK_1MS);
    /* the background alone: each frame's colour is its own */
    pvdc_wr_plane(&src, pvdc_plane_of(&src, 0, PRIMARY), PVDC_PS_CTRL, 0);
    write_wb_regs(&src, 0, PVDC_FMT_XRGB8888, slots, MODE_PITCH);
    qtest_memset(src.qts, src.vram.addr + 16 * MiB, 0x5a, 48 * MiB);

    qts = pvdc_test_spawn("heads=1,vram-size=64M", args);
    qtest_qmp_assert_success(src.qts, "{ 'execute': "
                             "'migrate-set-capabilities', 'arguments': { "
                             "'capabilities': [ { 'capability': "
                             "'pause-before-switchover', 'state': true } ] "
                             "} }");
    qtest_qmp_assert_success(src.qts, "{ 'execute': "
                             "'migrate-set-parameters', 'arguments': { "
                             "'max-bandwidth': %d } }", (int)(16 * MiB));
    qtest_qmp_assert_success(src.qts, "{ 'execute': 'migrate', "
                             "'arguments': { 'uri': %s } }", uri);
    for (;;) {
        g_autofree char *status = migration_status(src.qts, &syncs);
        unsigned int slot = frames % WB_SLOTS;
        uint32_t colour = 0x010203 * (frames + 1) & 0xffffff;

        if (!strcmp(status, "pre-switchover")) {
            break;
        }
        g_assert_cmpstr(status, !=, "failed");
        during += !strcmp(status, "active");
        pvdc_wr_head(&src, 0, PVDC_HS_WB_OFFSET, slots + slot * WB_SLOT_SIZE);
        pvdc_wr_head(&src, 0, PVDC_HS_BACKGROUND, colour);
        pvdc_wr_head(&src, 0, PVDC_HS_CTRL,
                     PVDC_HS_CTRL_ENABLE | PVDC_HS_CTRL_WRITEBACK);
        pvdc_doorbell(&src, 0);
        pvdc_step_to_next_vblank(&src, 0);
        g_assert_cmphex(pvdc_head_ctl(&src, 0, PVDC_HEAD_RESULT), ==,
                        PVDC_RESULT_APPLIED);
        last[slot] = colour;
        frames++;
    }
    g_test_message("%u writebacks, %u while the migration was active, %"
                   PRId64 " dirty-bitmap syncs", frames, during, syncs);
    /* several passes, each slot written during them */
    g_assert_cmpint(syncs, >=, 2);
    g_assert_cmpuint(during, >=, 2 * WB_SLOTS);

    qtest_qmp_assert_success(src.qts, "{ 'execute': 'migrate-continue', "
                             "'arguments': { 'state': 'pre-switchover' } }");
    g_assert_true(pvdc_migration_wait(src.qts));
    qtest_qmp_eventwait(qts, "RESUME");
    pvdc_test_attach(&dst, qts);
    for (unsigned int i = 0; i < WB_SLOTS; i++) {
        read_wb_slot(&src, bound, i, src_slot);
        read_wb_slot(&dst, bound, i, dst_slot);
        /* written opaque, first pixel to last */
        g_assert_cmphex((uint32_t)ldl_le_p(src_slot), ==,
                        0xff000000 | last[i]);
        g_assert_cmphex((uint32_t)ldl_le_p(src_slot + WB_SLOT_SIZE - 4), ==,
                        0xff000000 | last[i]);
        g_assert(memcmp(src_slot, dst_slot, WB_SLOT_SIZE) == 0);
    }
    pvdc_test_stop(&src);
    pvdc_test_stop(&dst);
    unlink(sock);
    rmdir(dir);
}

static void test_writebacks_during_precopy_arrive(void)
{
    writebacks_during_precopy_arrive(false);
}

static void test_writebacks_into_a_binding_during_precopy_arrive(void)
{
    writebacks_during_precopy_arrive(true);
}

/*
 * Head 1 drives connector 0, head 0 is off: the destination routes the
 * same, and its console 0 shows head 1's picture.
 */
static void test_routing_comes_along(void)
{
    g_autofree uint32_t *pixels = NULL;
    PVDCTest src, dst;
    int w, h;

    pvdc_test_start(&src, NULL);
    qtest_memset(src.qts, src.vram.addr, 0x5a, MODE_PITCH * MODE_H);
    pvdc_wr_head(&src, 1, PVDC_HS_CONNECTOR, 0);
    pvdc_enable_head(&src, 1, CLOCK_1MS);
    pvdc_test_migrate(&src, &dst, NULL, NULL);
    pvdc_test_stop(&src);

    g_assert_cmphex(pvdc_rd(&dst, PVDC_HEAD_ACTIVE(1) + PVDC_HS_CONNECTOR), ==,
                    0);
    g_assert_cmphex(pvdc_rd(&dst, PVDC_HEAD_SHADOW(1) + PVDC_HS_CONNECTOR), ==,
                    0);
    g_assert_cmphex(pvdc_rd(&dst, PVDC_HEAD_ACTIVE(0) + PVDC_HS_CTRL), ==, 0);
    pixels = pvdc_screendump(dst.qts, 0, &w, &h);
    g_assert_cmpint(w, ==, MODE_W);
    g_assert_cmpint(h, ==, MODE_H);
    for (int i = 0; i < w * h; i++) {
        g_assert_cmphex(pixels[i], ==, 0x5a5a5a);
    }
    g_free(pixels);
    /* connector 1 is driven by no head */
    pixels = pvdc_screendump(dst.qts, 1, &w, &h);
    g_assert_cmpint(w, !=, MODE_W);
    /* and the route holds: head 0 cannot take connector 0 */
    pvdc_wr_head(&dst, 0, PVDC_HS_CONNECTOR, 0);
    pvdc_write_mode(&dst, 0, CLOCK_1MS);
    g_assert_cmphex(pvdc_commit(&dst, 0), ==,
                    pvdc_head_result(PVDC_ERR_CONNECTOR));
    pvdc_test_stop(&dst);
}

/* ------------------------------------------------------------------------ */
/* Loading a stream                                                         */
/* ------------------------------------------------------------------------ */

/*
 * Start a destination with @props, its stderr in @log, and load @uri into
 * it.  Returns the destination (still running either way) and whether the
 * load completed.
 */
static QTestState *load_stream(const char *props, const char *uri,
                               const char *log, bool *loaded)
{
    g_autofree char *extra = g_strdup_printf("-incoming defer 2>%s", log);
    QTestState *qts = pvdc_test_spawn(props, extra);

    qtest_qmp_assert_success(qts, "{ 'execute': 'migrate-incoming', "
                             "'arguments': { 'uri': %s, "
                             "'exit-on-error': false } }", uri);
    *loaded = pvdc_migration_wait(qts);
    return qts;
}

/*
 * A destination configured unlike the source refuses the stream, and says
 * which property differs.  (VRAM of another size is already refused by
 * the RAM migration, which names the block.)
 */
static void test_mismatched_configuration_is_refused(void)
{
    static const char *const differs = "pvdc: the migration source has ";
    static const struct {
        const char *props;
        const char *says;
    } cases[] = {
        { "heads=2,overlays=1,vram-size=16M", "heads=3, this device heads=2" },
        { "heads=3,overlays=2,vram-size=16M", "overlays=1" },
        { SOURCE_PROPS ",scalers=3", "scalers=2" },
        { "heads=3,overlays=1,vram-size=32M",
          "pvdc.vram: 0x1000000 != 0x2000000" },
        { SOURCE_PROPS ",max-width=2048", "max-width=4096" },
        { SOURCE_PROPS ",max-height=4000", "max-height=2160" },
        { SOURCE_PROPS ",bandwidth-kib=1000", "bandwidth" },
    };
    Dir d = { g_dir_make_tmp("pvdc-migration-XXXXXX", NULL) };
    g_autofree char *state = dir_file(&d, "state");
    g_autofree char *log = dir_file(&d, "stderr");
    g_autofree char *uri = g_strdup_printf("file:%s", state);
    PVDCTest src;
    bool loaded;

    pvdc_test_start(&src, SOURCE_PROPS);
    pvdc_enable_head(&src, 0, CLOCK_1MS);
    qtest_qmp_assert_success(src.qts, "{ 'execute': 'migrate', "
                             "'arguments': { 'uri': %s } }", uri);
    g_assert_true(pvdc_migration_wait(src.qts));
    pvdc_test_stop(&src);

    /* The same configuration loads. */
    qtest_quit(load_stream(SOURCE_PROPS, uri, log, &loaded));
    g_assert_true(loaded);

    for (int i = 0; i < ARRAY_SIZE(cases); i++) {
        g_autofree char *err = NULL;
        QTestState *dst = load_stream(cases[i].props, uri, log, &loaded);

        g_assert_false(loaded);
        qtest_qmp_assert_success(dst, "{ 'execute': 'query-status' }");
        qtest_quit(dst);
        g_assert(g_file_get_contents(log, &err, NULL, NULL));
        g_test_message("%s: %s", cases[i].props, err);
        g_assert_nonnull(strstr(err, cases[i].says));
        g_assert(strstr(err, differs) || strstr(err, "pvdc.vram"));
    }
    dir_remove(&d);
}

/* ------------------------------------------------------------------------ */
/* The pvdc section of a stream, field by field                             */
/* ------------------------------------------------------------------------ */

typedef struct Field {
    char *path;             /* e.g. pvdc/heads[0]/active/regs[0] */
    size_t offset;          /* in the stream */
    size_t size;
} Field;

/* A subsection of the pvdc section, its header included. */
typedef struct Subsection {
    char *name;             /* e.g. pvdc/colors */
    size_t start, end;      /* in the stream */
} Subsection;

typedef struct Stream {
    uint8_t *data;
    size_t len;
    /* the pvdc section: its fields and subsections, without the footer */
    size_t start, end;
    GArray *fields;         /* of Field */
    GArray *subsections;    /* of Subsection */
} Stream;

/* Walk the fields of @desc (a vmsd's description) from *@pos. */
static void walk_vmsd(Stream *s, QDict *desc, const char *prefix, size_t *pos)
{
    QList *list = qdict_get_qlist(desc, "fields");
    QListEntry *e;

    if (!list) {
        return;
    }
    QLIST_FOREACH_ENTRY(list, e) {
        QDict *f = qobject_to(QDict, qlist_entry_obj(e));
        const char *name = qdict_get_str(f, "name");
        size_t size = qdict_get_int(f, "size");
        int64_t n = qdict_haskey(f, "array_len") ?
                    qdict_get_int(f, "array_len") : 1;
        int64_t first = qdict_haskey(f, "index") ? qdict_get_int(f, "index")
                                                  : 0;
        QDict *st = qdict_get_qdict(f, "struct");

        for (int64_t k = first; k < first + n; k++) {
            g_autofree char *path = qdict_haskey(f, "array_len") ||
                                    qdict_haskey(f, "index") ?
                g_strdup_printf("%s/%s[%" PRId64 "]", prefix, name, k) :
                g_strdup_printf("%s/%s", prefix, name);

            if (st) {
                size_t at = *pos;

                walk_vmsd(s, st, path, pos);
                g_assert_cmpuint(*pos - at, ==, size);
            } else {
                Field field = { g_strdup(path), *pos, size };

                g_array_append_val(s->fields, field);
                *pos += size;
            }
        }
    }

    list = qdict_get_qlist(desc, "subsections");
    if (!list) {
        return;
    }
    QLIST_FOREACH_ENTRY(list, e) {
        QDict *sub = qobject_to(QDict, qlist_entry_obj(e));
        const char *name = qdict_get_str(sub, "vmsd_name");
        size_t len = strlen(name);
        const char *last = strrchr(name, '/');
        g_autofree char *path = g_strdup_printf("%s/%s", prefix,
                                                last ? last + 1 : name);

        Subsection found = { g_strdup(name), *pos };

        g_assert_cmpuint(s->data[*pos], ==, VM_SUBSECTION);
        g_assert_cmpuint(s->data[*pos + 1], ==, len);
        g_assert(memcmp(s->data + *pos + 2, name, len) == 0);
        *pos += 2 + len + 4;
        walk_vmsd(s, sub, path, pos);
        found.end = *pos;
        g_array_append_val(s->subsections, found);
    }
}

/* The description of the section @idstr in the stream's JSON. */
static QDict *find_description(QObject *vmdesc, const char *idstr)
{
    QList *devices = qdict_get_qlist(qobject_to(QDict, vmdesc), "devices");
    QListEntry *e;

    QLIST_FOREACH_ENTRY(devices, e) {
        QDict *dev = qobject_to(QDict, qlist_entry_obj(e));

        if (!strcmp(qdict_get_str(dev, "name"), idstr)) {
            return dev;
        }
    }
    g_assert_not_reached();
}

static void stream_load(Stream *s, const char *path)
{
    static const char idstr[] = "0000:00:04.0/pvdc";
    g_autoptr(GError) err = NULL;
    QObject *vmdesc;
    g_autofree char *json = NULL;
    uint8_t *hit = NULL;
    size_t desc_len, pos;

    g_assert(g_file_get_contents(path, (char **)&s->data, &s->len, &err));
    s->fields = g_array_new(false, false, sizeof(Field));
    s->subsections = g_array_new(false, false, sizeof(Subsection));

    /* The JSON description closes the stream: find it from the end. */
    for (pos = s->len - 5; pos > 0 && !json; pos--) {
        desc_len = ldl_be_p(s->data + pos + 1);
        if (s->data[pos] == VM_VMDESCRIPTION && pos + 5 + desc_len <= s->len &&
            desc_len > 2 && s->data[pos + 5] == '{' &&
            s->data[pos + 4 + desc_len] == '}') {
            json = g_strndup((char *)s->data + pos + 5, desc_len);
        }
    }
    g_assert_nonnull(json);
    vmdesc = qobject_from_json(json, &error_abort);

    /* The section: its type, id, name, instance and version, then data. */
    for (pos = 0; pos + sizeof(idstr) < s->len; pos++) {
        if (s->data[pos] == sizeof(idstr) - 1 &&
            !memcmp(s->data + pos + 1, idstr, sizeof(idstr) - 1) &&
            s->data[pos - 5] == VM_SECTION_FULL) {
            hit = s->data + pos;
            break;
        }
    }
    g_assert_nonnull(hit);
    s->start = pos + 1 + sizeof(idstr) - 1 + 8;
    pos = s->start;
    walk_vmsd(s, find_description(vmdesc, idstr), "pvdc", &pos);
    s->end = pos;
    /* The walk ends exactly where the section does. */
    g_assert_cmpuint(s->data[s->end], ==, VM_SECTION_FOOTER);
    g_assert(memcmp(s->data + s->end + 1, hit - 4, 4) == 0);
    qobject_unref(vmdesc);
}

static void stream_free(Stream *s)
{
    for (unsigned int i = 0; i < s->fields->len; i++) {
        g_free(g_array_index(s->fields, Field, i).path);
    }
    g_array_free(s->fields, true);
    for (unsigned int i = 0; i < s->subsections->len; i++) {
        g_free(g_array_index(s->subsections, Subsection, i).name);
    }
    g_array_free(s->subsections, true);
    g_free(s->data);
}

/*
 * A source with everything a stream can say: three heads on, planes
 * moved and blended, a group commit armed, interrupts and CRC on,
 * connectors changed.  Saved to @path.
 */
static void save_busy_source(const char *path)
{
    g_autofree char *uri = g_strdup_printf("file:%s", path);
    PVDCTest t;
    unsigned int ov = 0;

    pvdc_test_start(&t, SOURCE_PROPS);
    /* head 0: a pipeline of every stage, 3-entry LUTs at 1 MiB */
    pvdc_wr_head(&t, 0, PVDC_HS_DEGAMMA_LUT, 1 * MiB);
    pvdc_wr_head(&t, 0, PVDC_HS_CTM, 1 * MiB + 64);
    pvdc_wr_head(&t, 0, PVDC_HS_GAMMA_LUT, 1 * MiB + 256);
    pvdc_wr_head(&t, 0, PVDC_HS_LUT_SIZES, PVDC_XY(3, 3));
    pvdc_enable_head(&t, 0, CLOCK_1MS);
    /* and a writeback target at 2 MiB, written at the latch */
    pvdc_wr_head(&t, 0, PVDC_HS_WB_FORMAT, PVDC_FMT_ABGR8888);
    pvdc_wr_head(&t, 0, PVDC_HS_WB_OFFSET, 2 * MiB);
    pvdc_wr_head(&t, 0, PVDC_HS_WB_PITCH, MODE_PITCH + 64);
    pvdc_wr_head(&t, 0, PVDC_HS_CTRL, PVDC_HS_CTRL_VALID_MASK);
    g_assert_cmphex(pvdc_commit(&t, 0), ==, PVDC_RESULT_APPLIED);
    pvdc_enable_head(&t, 1, CLOCK_2MS);
    pvdc_step_to(&t, t.now + PERIOD_1MS / 3);
    pvdc_enable_head(&t, 2, CLOCK_1MS);
    ov = pvdc_plane_of(&t, 0, OVERLAY(0));
    /* NV12, downscaled: the chroma registers and encoding bits in use */
    pvdc_write_plane(&t, ov, 1, 128 * KiB, 1);
    pvdc_write_fb(&t, ov, PVDC_FMT_NV12, 128 * KiB, 64, 63, 47);
    pvdc_wr_plane(&t, ov, PVDC_PS_CHROMA_OFFSET, 192 * KiB);
    pvdc_wr_plane(&t, ov, PVDC_PS_CHROMA_PITCH, 64);
    pvdc_wr_plane(&t, ov, PVDC_PS_DST_SIZE, PVDC_XY(32, 24));
    pvdc_wr_plane(&t, ov, PVDC_PS_ALPHA, 0x8000);
    pvdc_wr_plane(&t, ov, PVDC_PS_CTRL, PVDC_PS_CTRL_ENABLE |
                  PVDC_PS_CTRL_FILTER_BILINEAR |
                  PVDC_BLEND_COVERAGE << PVDC_PS_CTRL_BLEND_SHIFT |
                  PVDC_COLOR_BT2020 << PVDC_PS_CTRL_COLOR_ENCODING_SHIFT);
    g_assert_cmphex(pvdc_commit(&t, 1), ==, PVDC_RESULT_APPLIED);
    pvdc_wr_plane(&t, pvdc_cursor_of(&t, 2), PVDC_PS_HEAD, 2);
    pvdc_write_fb(&t, pvdc_cursor_of(&t, 2), PVDC_FMT_ARGB8888, 256 * KiB, 128,
                  32, 32);
    pvdc_wr_plane(&t, pvdc_cursor_of(&t, 2), PVDC_PS_ZPOS, 2);
    pvdc_wr_plane(&t, pvdc_cursor_of(&t, 2), PVDC_PS_CTRL, PVDC_PS_CTRL_ENABLE);
    g_assert_cmphex(pvdc_commit(&t, 2), ==, PVDC_RESULT_APPLIED);
    pvdc_wr(&t, PVDC_HEAD_CONTROL(0) + PVDC_HEAD_CRC_CTRL,
            PVDC_CRC_CTRL_ENABLE);
    (void)pvdc_head_ctl(&t, 0, PVDC_HEAD_CRC_VALUE);
    pvdc_wr(&t, PVDC_REG_INT_ENABLE, PVDC_INT(0, PVDC_INT_VBLANK) |
            PVDC_INT(1, PVDC_INT_COMMIT_DONE));
    pvdc_qom_set_uint(t.qts, "head1-xres", 800);
    /* Armed when saved: the overlay goes back to head 0, both heads. */
    pvdc_wr_plane(&t, ov, PVDC_PS_HEAD, 0);
    /* head 1 gets a 2-entry GAMMA_LUT */
    pvdc_wr_head(&t, 1, PVDC_HS_GAMMA_LUT, 1 * MiB + 512);
    pvdc_wr_head(&t, 1, PVDC_HS_LUT_SIZES, PVDC_XY(0, 2));
    pvdc_wr_head(&t, 1, PVDC_HS_CTRL, PVDC_HS_CTRL_ENABLE | PVDC_HS_CTRL_GAMMA);
    pvdc_wr_head(&t, 0, PVDC_HS_BACKGROUND, 0x102030);
    pvdc_wr(&t, PVDC_REG_MULTI_DOORBELL, BIT(0) | BIT(1));
    pvdc_doorbell(&t, 2);
    g_assert_cmphex(pvdc_rd(&t, PVDC_REG_MULTI_DOORBELL), ==, 7);

    qtest_qmp_assert_success(t.qts, "{ 'execute': 'migrate', "
                             "'arguments': { 'uri': %s } }", uri);
    g_assert_true(pvdc_migration_wait(t.qts));
    pvdc_test_stop(&t);
}

/*
 * Have head @h composed, as a UI would: a screendump nobody reads (a
 * loaded mode may be as large as the device allows, three heads of it).
 */
static void compose(QTestState *qts, unsigned int h)
{
    qtest_qmp_assert_success(qts, "{ 'execute': 'screendump', "
                             "'arguments': { 'filename': '/dev/null', "
                             "'device': 'pvdc0', 'head': %d, "
                             "'format': 'ppm' } }", h);
}

/*
 * Load @data into a fresh destination.  A stream it refuses is fine; a
 * stream it accepts must leave a state that passes the commit rules, and
 * the device must then run: every register read, its heads composed and
 * CRC'd, interrupts on, commits armed and time passing.
 */
static bool load_and_run(Dir *d, const uint8_t *data, size_t len)
{
    g_autofree char *path = dir_file(d, "mutated");
    g_autofree char *log = dir_file(d, "stderr");
    g_autofree char *uri = g_strdup_printf("file:%s", path);
    unsigned int failed = 0;
    PVDCSnapshot active;
    PVDCTest t;
    Model m;
    bool loaded;

    g_assert(g_file_set_contents(path, (const char *)data, len, NULL));
    t.qts = load_stream(SOURCE_PROPS, uri, log, &loaded);
    if (!loaded) {
        qtest_qmp_assert_success(t.qts, "{ 'execute': 'query-status' }");
        qtest_quit(t.qts);
        return false;
    }

    pvdc_test_attach(&t, t.qts);
    t.now = 0;
    model_init(&m, &t);
    pvdc_snapshot_active(&t, &active);
    g_assert_cmphex(model_check_active(&m, &active, &failed), ==, 0);

    {
        g_autofree uint8_t *bar = g_malloc(PVDC_MMIO_SIZE);

        /* every register, in one qtest round trip */
        qtest_memread(t.qts, t.mmio.addr, bar, PVDC_MMIO_SIZE);
    }
    pvdc_wr(&t, PVDC_REG_INT_ENABLE,
            MAKE_64BIT_MASK(0, t.heads * PVDC_INT_BITS_PER_HEAD));
    for (unsigned int h = 0; h < t.heads; h++) {
        pvdc_wr(&t, PVDC_HEAD_CONTROL(h) + PVDC_HEAD_CRC_CTRL,
                PVDC_CRC_CTRL_ENABLE);
        (void)pvdc_head_ctl(&t, h, PVDC_HEAD_CRC_VALUE);
        compose(t.qts, h);
    }
    pvdc_step_to(&t, t.now + 3 * PERIOD_1MS);
    pvdc_wr(&t, PVDC_REG_MULTI_DOORBELL, MAKE_64BIT_MASK(0, t.heads));
    pvdc_step_to(&t, t.now + 3 * PERIOD_1MS);
    for (unsigned int h = 0; h < t.heads; h++) {
        (void)pvdc_head_ctl(&t, h, PVDC_HEAD_CRC_VALUE);
        compose(t.qts, h);
    }
    (void)pvdc_rd(&t, PVDC_REG_INT_ACK);
    pvdc_test_stop(&t);
    return true;
}

static const uint64_t hostile_values[] = {
    0, 1, 0x7f, 0x80, 0xff, 0x7fff, 0x8000, 0xffff, 0x7fffffff, 0x80000000,
    0xffffffff, 0x100000000ull, INT64_MAX, (uint64_t)INT64_MIN, UINT64_MAX,
};

/* Big-endian @value, truncated or zero-extended to @size bytes, at @at. */
static void put_be(uint8_t *at, size_t size, uint64_t value)
{
    for (size_t i = 0; i < size; i++) {
        at[size - 1 - i] = i < sizeof(value) ? value >> (8 * i) : 0;
    }
}

/* The stream field at @path. */
static const Field *stream_field(Stream *s, const char *path)
{
    for (unsigned int i = 0; i < s->fields->len; i++) {
        const Field *f = &g_array_index(s->fields, Field, i);

        if (!strcmp(f->path, path)) {
            return f;
        }
    }
    g_assert_not_reached();
}

/*
 * A stream whose enabled heads share a connector or drive one that does
 * not exist is refused, whatever a disabled head says.
 */
static void test_hostile_routes_are_refused(void)
{
    static const struct {
        unsigned int head;
        uint32_t connector;
        bool loads;
    } cases[] = {
        { 2, 0, false },            /* head 1 drives connector 0 */
        { 2, 3, false },
        { 2, 0xffffffff, false },
        { 1, 2, false },            /* head 2 drives connector 2 */
        { 1, 0x80000000, false },
        { 2, 1, true },             /* connector 1 is free */
        { 0, 2, true },             /* head 0 is disabled */
        { 0, 0xffffffff, true },
    };
    Dir d = { g_dir_make_tmp("pvdc-migration-XXXXXX", NULL) };
    g_autofree char *state = dir_file(&d, "state");
    g_autofree char *uri = g_strdup_printf("file:%s", state);
    g_autofree char *log = dir_file(&d, "stderr");
    Stream s = {};
    PVDCTest t;

    pvdc_test_start(&t, SOURCE_PROPS);
    pvdc_wr_head(&t, 1, PVDC_HS_CONNECTOR, 0);
    pvdc_enable_head(&t, 1, CLOCK_1MS);
    pvdc_enable_head(&t, 2, CLOCK_2MS);
    qtest_qmp_assert_success(t.qts, "{ 'execute': 'migrate', "
                             "'arguments': { 'uri': %s } }", uri);
    g_assert_true(pvdc_migration_wait(t.qts));
    pvdc_test_stop(&t);
    stream_load(&s, state);
    g_assert_true(load_and_run(&d, s.data, s.len));

    for (int i = 0; i < ARRAY_SIZE(cases); i++) {
        g_autofree char *path =
            g_strdup_printf("pvdc/heads[%u]/active/regs[%zu]", cases[i].head,
                            PVDC_HS_CONNECTOR / sizeof(uint32_t));
        g_autofree uint8_t *data = g_memdup2(s.data, s.len);
        const Field *f = stream_field(&s, path);

        g_assert_cmpuint(f->size, ==, 4);
        put_be(data + f->offset, f->size, cases[i].connector);
        g_assert_cmpint(load_and_run(&d, data, s.len), ==, cases[i].loads);
        if (!cases[i].loads) {
            g_autofree char *err = NULL;

            g_assert(g_file_get_contents(log, &err, NULL, NULL));
            g_assert(strstr(err, "connector"));
        }
    }
    stream_free(&s);
    dir_remove(&d);
}

/*
 * A source with two bindings of guest pages, its stream in @path; the
 * address of its register BAR in *@bar0.
 */
static void save_bound_source(const char *path, uint64_t *bar0)
{
    g_autofree char *uri = g_strdup_printf("file:%s", path);
    const uint64_t table = 8 * MiB;
    const uint64_t entries[] = { 10 * MiB, PVDC_BIND_PAGE_SIZE,
                                 9 * MiB, 2 * PVDC_BIND_PAGE_SIZE };
    PVDCTest t;

    pvdc_test_start(&t, SOURCE_PROPS);
    *bar0 = t.mmio.addr;
    pvdc_write_bind_table(&t, table, entries, 2);
    g_assert_cmphex(pvdc_bind_range(&t, 0x80000000, 3 * PVDC_BIND_PAGE_SIZE,
                                    table, 2), ==, PVDC_BIND_OK);
    g_assert_cmphex(pvdc_bind_range(&t, 0x90000000, PVDC_BIND_PAGE_SIZE,
                                    table, 1), ==, PVDC_BIND_OK);
    qtest_qmp_assert_success(t.qts, "{ 'execute': 'migrate', "
                             "'arguments': { 'uri': %s } }", uri);
    g_assert_true(pvdc_migration_wait(t.qts));
    pvdc_test_stop(&t);
}

/*
 * Bindings in a stream are checked as BIND checks them: pages that are
 * not RAM (the register BAR: DMA into the device's own registers), past
 * RAM, misaligned, lengths that do not add up, ranges in VRAM or over
 * each other, counts past the limits are refused, never mapped.
 */
static void test_hostile_bindings_are_refused(void)
{
    unsigned int repeated = 0;
    Dir d = { g_dir_make_tmp("pvdc-migration-XXXXXX", NULL) };
    g_autofree char *state = dir_file(&d, "state");
    g_autofree char *log = dir_file(&d, "stderr");
    uint64_t bar0;
    Stream s = {};
    /*
     * QEMU's description of the stream gives the first element of an
     * array of structs an index and no other: "bindings" is binding 1.
     */
    const struct {
        const char *field;
        uint64_t value;         /* UINT64_MAX - 1: the register BAR */
    } cases[] = {
        { "pvdc/memory/bindings[0]/entries[0]/addr", UINT64_MAX - 1 },
        { "pvdc/memory/bindings[0]/entries[1]/addr", 4 * GiB },
        { "pvdc/memory/bindings[0]/entries[1]/addr", 128 * MiB - 4096 },
        { "pvdc/memory/bindings[0]/entries[0]/addr", 10 * MiB + 8 },
        { "pvdc/memory/bindings[0]/entries[0]/len", 0 },
        { "pvdc/memory/bindings[0]/entries[0]/len", UINT64_MAX - 4095 },
        { "pvdc/memory/bindings[0]/entries[1]/len", 4096 },
        { "pvdc/memory/bindings/entries/len", 4097 },
        { "pvdc/memory/bindings[0]/addr", 0 },
        { "pvdc/memory/bindings[0]/addr", 0x80000800 },
        { "pvdc/memory/bindings/addr", 0x80002000 },
        { "pvdc/memory/bindings/addr", 0x7ffff000 },
        { "pvdc/memory/bindings/size", 0x70000000 },
        { "pvdc/memory/bindings[0]/size", 4 * 4096 },
        { "pvdc/memory/bindings/size", 0 },
        { "pvdc/memory/bindings[0]/num_entries", 0 },
        { "pvdc/memory/bindings[0]/num_entries", 0xffffffff },
        { "pvdc/memory/bindings[0]/num_entries", 0x7fffffff },
        { "pvdc/memory/bindings[0]/num_entries", 1 },
        { "pvdc/memory/num_bindings", PVDC_MAX_BINDINGS + 1 },
        { "pvdc/memory/num_bindings", 0xffffffff },
        { "pvdc/memory/bind_status", 0x77 },
    };

    save_bound_source(state, &bar0);
    stream_load(&s, state);
    for (unsigned int i = 0; i < s.fields->len; i++) {
        const Field *f = &g_array_index(s.fields, Field, i);

        if (g_str_has_prefix(f->path, "pvdc/memory")) {
            g_test_message("%s: %zu bytes", f->path, f->size);
        }
    }
    g_assert_true(load_and_run(&d, s.data, s.len));

    for (int i = 0; i < ARRAY_SIZE(cases); i++) {
        g_autofree uint8_t *data = g_memdup2(s.data, s.len);
        const Field *f = stream_field(&s, cases[i].field);
        uint64_t value = cases[i].value == UINT64_MAX - 1 ? bar0
                                                           : cases[i].value;

        g_test_message("%s = 0x%" PRIx64, cases[i].field, value);
        put_be(data + f->offset, f->size, value);
        g_assert_false(load_and_run(&d, data, s.len));
    }

    /* The subsection twice in a row is refused, as every subsection is. */
    for (unsigned int i = 0; i < s.subsections->len; i++) {
        const Subsection *sub = &g_array_index(s.subsections, Subsection, i);
        size_t len = sub->end - sub->start;
        g_autofree uint8_t *data = NULL;

        if (strcmp(sub->name, "pvdc/memory")) {
            continue;
        }
        data = g_malloc(s.len + len);
        memcpy(data, s.data, sub->end);
        memcpy(data + sub->end, s.data + sub->start, len);
        memcpy(data + sub->end + len, s.data + sub->end, s.len - sub->end);
        g_assert_false(load_and_run(&d, data, s.len + len));
        repeated++;
    }
    g_assert_cmpuint(repeated, ==, 1);
    stream_free(&s);
    dir_remove(&d);
}

/*
 * The fields worth a load of their own: every field of the device's own
 * state (not the PCI core's, not the shadow registers nor the entries of
 * the colour tables and matrices, where any value is one a guest may
 * write), in the elements of the arrays that the source uses: heads 0 and
 * 1, the overlay moved between them and head 2's cursor (planes 1 and 8),
 * the overlay's armed copy.
 */
static bool field_selected(const Field *f)
{
    g_auto(GStrv) parts = NULL;

    if (g_str_has_prefix(f->path, "pvdc/parent_obj") ||
        strstr(f->path, "/shadow/")) {
        return false;
    }
    parts = g_strsplit(f->path, "/", -1);
    for (int k = 0; parts[k]; k++) {
        g_autofree char *name = NULL;
        const char *bracket = strchr(parts[k], '['), *end;
        unsigned long i;

        if (!bracket) {
            continue;
        }
        name = g_strndup(parts[k], bracket - parts[k]);
        if (!strcmp(name, "degamma") || !strcmp(name, "gamma") ||
            !strcmp(name, "ctm")) {
            return false;
        }
        g_assert_cmpint(qemu_strtoul(bracket + 1, &end, 10, &i), ==, 0);
        if (!strcmp(name, "planes") ? i != 1 && i != 8 :
            !strcmp(name, "armed_planes") || !strcmp(name, "plane_armed") ?
            i != 1 : i > 1) {
            return false;
        }
    }
    return true;
}

static void test_field_mutations_load_only_valid_states(void)
{
    Dir d = { g_dir_make_tmp("pvdc-migration-XXXXXX", NULL) };
    g_autofree char *state = dir_file(&d, "state");
    unsigned int tried = 0, loaded = 0;
    Stream s = {};

    save_busy_source(state);
    stream_load(&s, state);
    g_test_message("pvdc section: %zu bytes, %u fields", s.end - s.start,
                   s.fields->len);
    /* Unchanged, it loads. */
    g_assert_true(load_and_run(&d, s.data, s.len));

    for (unsigned int i = 0; i < s.fields->len; i++) {
        const Field *f = &g_array_index(s.fields, Field, i);

        if (!field_selected(f)) {
            continue;
        }
        /*
         * All ones, the sign bit alone, zero: of the field's width (a
         * field wider than 64 bits gets all ones and zero).
         */
        uint64_t values[] = { UINT64_MAX,
                              f->size <= 8 ? 1ull << (8 * f->size - 1) : 0,
                              0 };

        for (int v = 0; v < ARRAY_SIZE(values); v++) {
            if (v && values[v] == values[v - 1]) {
                continue;
            }
            g_autofree uint8_t *data = g_memdup2(s.data, s.len);
            uint64_t value = values[v];

            put_be(data + f->offset, f->size, value);
            if (!memcmp(data + f->offset, s.data + f->offset, f->size)) {
                continue;
            }
            tried++;
            if (load_and_run(&d, data, s.len)) {
                loaded++;
            } else {
                g_test_message("refused: %s = 0x%" PRIx64, f->path,
                               f->size < 8 ? value &
                               (uint64_t)MAKE_64BIT_MASK(0, 8 * f->size) :
                               value);
            }
        }
    }
    g_test_message("%u field mutations: %u loaded, %u refused", tried,
                   loaded, tried - loaded);
    g_assert_cmpuint(tried, >, 100);
    g_assert_cmpuint(tried - loaded, >, 20);
    stream_free(&s);
    dir_remove(&d);
}

/*
 * QEMU's loader takes a subsection as often as a stream repeats it.  A
 * source never sends one twice, so a stream that does is refused: loaded,
 * the second copy would replace what the first allocated.
 */
static void test_repeated_subsections_are_refused(void)
{
    Dir d = { g_dir_make_tmp("pvdc-migration-XXXXXX", NULL) };
    g_autofree char *state = dir_file(&d, "state");
    Stream s = {};

    save_busy_source(state);
    stream_load(&s, state);
    /* every subsection the device has is in the busy source's stream */
    g_assert_cmpuint(s.subsections->len, >=, 2);
    for (unsigned int i = 0; i < s.subsections->len; i++) {
        const Subsection *sub = &g_array_index(s.subsections, Subsection, i);
        size_t len = sub->end - sub->start;
        g_autofree uint8_t *data = g_malloc(s.len + len);

        /* the subsection, then itself again, then the rest */
        memcpy(data, s.data, sub->end);
        memcpy(data + sub->end, s.data + sub->start, len);
        memcpy(data + sub->end + len, s.data + sub->end, s.len - sub->end);
        g_test_message("%s (%zu bytes) twice", sub->name, len);
        g_assert_false(load_and_run(&d, data, s.len + len));
    }
    /* and the stream as it was still loads */
    g_assert_true(load_and_run(&d, s.data, s.len));
    stream_free(&s);
    dir_remove(&d);
}

/*
 * Each mutation starts a QEMU of its own: 1000 by default,
 * PVDC_MIGRATION_MUTATIONS to choose (meson.build runs fewer on each
 * build).  The mutations are drawn from the test's random seed, printed
 * at its start ("# random seed: ...") and given back with --seed to
 * reproduce a run: every run loads streams no earlier run loaded.
 */
static unsigned int random_mutation_runs(void)
{
    const char *env = g_getenv("PVDC_MIGRATION_MUTATIONS");
    unsigned long runs;

    if (!env) {
        return g_test_slow() ? 10000 : 1000;
    }
    g_assert_cmpint(qemu_strtoul(env, NULL, 10, &runs), ==, 0);
    g_assert_cmpuint(runs, >=, 10);
    g_assert_cmpuint(runs, <=, 1000000);
    return runs;
}

static void test_random_mutations_load_only_valid_states(void)
{
    unsigned int runs = random_mutation_runs();
    Dir d = { g_dir_make_tmp("pvdc-migration-XXXXXX", NULL) };
    g_autofree char *state = dir_file(&d, "state");
    GRand *rng = g_rand_new_with_seed(g_test_rand_int());
    g_autofree uint8_t *data = NULL;
    unsigned int loaded = 0;
    Stream s = {};

    save_busy_source(state);
    stream_load(&s, state);
    data = g_malloc(s.len);

    for (unsigned int run = 0; run < runs; run++) {
        int changes = g_rand_int_range(rng, 1, 5);

        memcpy(data, s.data, s.len);
        for (int c = 0; c < changes; c++) {
            const Field *f = &g_array_index(s.fields, Field,
                                            g_rand_int_range(rng, 0,
                                                             s.fields->len));

            switch (g_rand_int_range(rng, 0, 3)) {
            case 0:
                /* any byte of the section, subsection headers included */
                data[g_rand_int_range(rng, s.start, s.end)] = g_rand_int(rng);
                break;
            case 1:
                /* a field, to a value that breaks limits */
                put_be(data + f->offset, f->size,
                       hostile_values[g_rand_int_range(rng, 0,
                                       ARRAY_SIZE(hostile_values))]);
                break;
            default:
                /* a field, to anything */
                put_be(data + f->offset, f->size,
                       (uint64_t)g_rand_int(rng) << 32 | g_rand_int(rng));
                break;
            }
        }
        loaded += load_and_run(&d, data, s.len);
    }
    g_test_message("%u random mutations: %u loaded, %u refused", runs,
                   loaded, runs - loaded);
    g_assert_cmpuint(loaded, >, 0);
    g_assert_cmpuint(loaded, <, runs);
    g_rand_free(rng);
    stream_free(&s);
    dir_remove(&d);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);

    qtest_add_func("/pvdc/migration/armed-commit-applies-at-its-vblank",
                   test_armed_commit_applies_at_its_vblank);
    qtest_add_func("/pvdc/migration/armed-enable-applies-at-its-first-vblank",
                   test_armed_enable_applies_at_its_first_vblank);
    qtest_add_func("/pvdc/migration/color-pipeline-comes-along",
                   test_color_pipeline_comes_along);
    qtest_add_func("/pvdc/migration/routing-comes-along",
                   test_routing_comes_along);
    qtest_add_func("/pvdc/migration/hostile-routes-are-refused",
                   test_hostile_routes_are_refused);
    qtest_add_func("/pvdc/migration/hostile-bindings-are-refused",
                   test_hostile_bindings_are_refused);
    qtest_add_func("/pvdc/migration/writeback-comes-along",
                   test_writeback_comes_along);
    qtest_add_func("/pvdc/migration/writebacks-during-precopy-arrive",
                   test_writebacks_during_precopy_arrive);
    qtest_add_func("/pvdc/migration/"
                   "writebacks-into-a-binding-during-precopy-arrive",
                   test_writebacks_into_a_binding_during_precopy_arrive);
    qtest_add_func("/pvdc/migration/mismatched-configuration-is-refused",
                   test_mismatched_configuration_is_refused);
    qtest_add_func("/pvdc/migration/field-mutations-load-only-valid-states",
                   test_field_mutations_load_only_valid_states);
    qtest_add_func("/pvdc/migration/repeated-subsections-are-refused",
                   test_repeated_subsections_are_refused);
    qtest_add_func("/pvdc/migration/random-mutations-load-only-valid-states",
                   test_random_mutations_load_only_valid_states);

    return g_test_run();
}
