/*
 * The pvdc qtest library: what every pvdc qtest shares (pvdc-qtest.h says
 * what each helper does).
 *
 * Copyright (c) 2026 The pvdc authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "pvdc-qtest.h"

/*
 * libqos places BARs in the 512 MiB below 4 GiB, BAR 0 first.  VRAM that
 * does not fit there (a vram-size of 512 MiB) goes to the
 * 512 MiB below them, between q35's MMCONFIG and the libqos window.  More
 * goes above 4 GiB, as its 64-bit BAR allows: there only qtest_memread()
 * and qtest_memwrite() reach it, libqos' PC bus takes 32-bit addresses.
 */
#define PVDC_TEST_VRAM_LOW      0xc0000000ULL
#define PVDC_TEST_VRAM_LOW_MAX  (512 * MiB)
#define PVDC_TEST_VRAM_HIGH     (64 * GiB)

static QPCIBar pvdc_test_map_vram(PVDCTest *t)
{
    QPCIBus *bus = t->dev->bus;
    int reg = PCI_BASE_ADDRESS_0 + PVDC_VRAM_BAR * 4;
    QPCIBar bar = {};

    if (QEMU_ALIGN_UP(bus->mmio_alloc_ptr, t->vram_size) + t->vram_size <=
        bus->mmio_limit) {
        return qpci_iomap(t->dev, PVDC_VRAM_BAR, NULL);
    }
    bar.addr = t->vram_size <= PVDC_TEST_VRAM_LOW_MAX ? PVDC_TEST_VRAM_LOW
                                                     : PVDC_TEST_VRAM_HIGH;
    qpci_config_writel(t->dev, reg, (uint32_t)bar.addr);
    qpci_config_writel(t->dev, reg + 4, bar.addr >> 32);
    return bar;
}

void pvdc_test_map(PVDCTest *t)
{
    uint32_t max;

    qpci_device_enable(t->dev);
    t->mmio = qpci_iomap(t->dev, PVDC_MMIO_BAR, NULL);
    t->vram_size = pvdc_rd(t, PVDC_REG_VRAM_SIZE_LO) |
                   (uint64_t)pvdc_rd(t, PVDC_REG_VRAM_SIZE_HI) << 32;
    t->vram = pvdc_test_map_vram(t);
    t->heads = pvdc_rd(t, PVDC_REG_NUM_HEADS);
    t->overlays = pvdc_rd(t, PVDC_REG_NUM_OVERLAYS);
    t->planes = pvdc_rd(t, PVDC_REG_NUM_PLANES);
    max = pvdc_rd(t, PVDC_REG_MAX_SIZE);
    t->max_w = PVDC_X(max);
    t->max_h = PVDC_Y(max);
}

void pvdc_test_attach(PVDCTest *t, QTestState *qts)
{
    t->qts = qts;
    t->bus = qpci_new_pc(t->qts, NULL);
    t->dev = qpci_device_find(t->bus, QPCI_DEVFN(4, 0));
    g_assert_nonnull(t->dev);
    pvdc_test_map(t);
}

QTestState *pvdc_test_spawn(const char *props, const char *extra)
{
    return qtest_initf("-machine q35 -nodefaults "
                       "-device pvdc,addr=04.0,id=pvdc0%s%s %s",
                       props ? "," : "", props ? props : "",
                       extra ? extra : "");
}

void pvdc_test_start_with(PVDCTest *t, const char *props, const char *extra)
{
    pvdc_test_attach(t, pvdc_test_spawn(props, extra));
    t->now = qtest_clock_step(t->qts, 1);
}

void pvdc_test_start(PVDCTest *t, const char *props)
{
    pvdc_test_start_with(t, props, NULL);
}

void pvdc_test_detach(PVDCTest *t)
{
    g_free(t->dev);
    qpci_free_pc(t->bus);
}

void pvdc_test_stop(PVDCTest *t)
{
    pvdc_test_detach(t);
    qtest_quit(t->qts);
}

void pvdc_step_to(PVDCTest *t, int64_t when)
{
    g_assert_cmpint(when, >=, t->now);
    if (when > t->now) {
        t->now = qtest_clock_set(t->qts, when);
        g_assert_cmpint(t->now, ==, when);
    }
}

void pvdc_step_next(PVDCTest *t)
{
    t->now = qtest_clock_step_next(t->qts);
}

void pvdc_rd_block(PVDCTest *t, uint64_t reg, uint32_t *val,
                   unsigned int count)
{
    qtest_memread(t->qts, t->mmio.addr + reg, val, count * sizeof(*val));
    for (unsigned int i = 0; i < count; i++) {
        val[i] = le32_to_cpu(val[i]);
    }
}

/* The head and plane windows at @head_base and @plane_base. */
static void pvdc_snapshot_window(PVDCTest *t, PVDCSnapshot *snap,
                                 uint64_t head_base, uint64_t plane_base)
{
    memset(snap, 0, sizeof(*snap));
    for (unsigned int i = 0; i < t->heads; i++) {
        pvdc_rd_block(t, head_base + i * PVDC_HEAD_STRIDE, snap->head[i],
                      PVDC_HEAD_STATE_REGS);
    }
    for (unsigned int i = 0; i < t->planes; i++) {
        pvdc_rd_block(t, plane_base + i * PVDC_PLANE_STRIDE, snap->plane[i],
                      PVDC_PLANE_STATE_REGS);
    }
}

void pvdc_snapshot_active(PVDCTest *t, PVDCSnapshot *snap)
{
    pvdc_snapshot_window(t, snap, PVDC_HEAD_ACTIVE_BASE,
                         PVDC_PLANE_ACTIVE_BASE);
}

void pvdc_snapshot_shadow(PVDCTest *t, PVDCSnapshot *snap)
{
    pvdc_snapshot_window(t, snap, PVDC_HEAD_SHADOW_BASE,
                         PVDC_PLANE_SHADOW_BASE);
}

void pvdc_assert_active_is(PVDCTest *t, const PVDCSnapshot *expected)
{
    PVDCSnapshot now;

    pvdc_snapshot_active(t, &now);
    g_assert(memcmp(&now, expected, sizeof(now)) == 0);
}

uint64_t pvdc_vblank_time(PVDCTest *t, unsigned int head)
{
    uint32_t lo = pvdc_head_ctl(t, head, PVDC_HEAD_VBLANK_TIME_LO);

    return lo | (uint64_t)pvdc_head_ctl(t, head,
                                        PVDC_HEAD_VBLANK_TIME_HI) << 32;
}

void pvdc_step_to_next_vblank(PVDCTest *t, unsigned int head)
{
    uint32_t period = pvdc_head_ctl(t, head, PVDC_HEAD_FRAME_PERIOD);

    g_assert_cmpuint(period, !=, 0);
    pvdc_step_to(t, pvdc_vblank_time(t, head) + period);
}

void pvdc_write_mode_sized(PVDCTest *t, unsigned int head, uint32_t w,
                           uint32_t h, uint32_t htotal, uint32_t vtotal,
                           uint32_t clock_khz)
{
    pvdc_wr_head(t, head, PVDC_HS_HTIMING, PVDC_XY(w, htotal));
    pvdc_wr_head(t, head, PVDC_HS_HSYNC, PVDC_XY(w, htotal));
    pvdc_wr_head(t, head, PVDC_HS_VTIMING, PVDC_XY(h, vtotal));
    pvdc_wr_head(t, head, PVDC_HS_VSYNC, PVDC_XY(h, vtotal));
    pvdc_wr_head(t, head, PVDC_HS_PIXEL_CLOCK, clock_khz);
    pvdc_wr_head(t, head, PVDC_HS_CTRL, PVDC_HS_CTRL_ENABLE);
}

void pvdc_write_mode(PVDCTest *t, unsigned int head, uint32_t clock_khz)
{
    pvdc_write_mode_sized(t, head, MODE_W, MODE_H, MODE_HTOTAL, MODE_VTOTAL,
                          clock_khz);
}

void pvdc_write_fb(PVDCTest *t, unsigned int plane, uint32_t format,
                   uint64_t offset, uint32_t pitch, uint32_t w, uint32_t h)
{
    pvdc_wr_plane(t, plane, PVDC_PS_FORMAT, format);
    pvdc_wr_plane(t, plane, PVDC_PS_FB_OFFSET, offset);
    pvdc_wr_plane(t, plane, PVDC_PS_FB_PITCH, pitch);
    pvdc_wr_plane(t, plane, PVDC_PS_FB_SIZE, PVDC_XY(w, h));
    pvdc_wr_plane(t, plane, PVDC_PS_SRC_X, 0);
    pvdc_wr_plane(t, plane, PVDC_PS_SRC_Y, 0);
    pvdc_wr_plane(t, plane, PVDC_PS_SRC_W, FP16(w));
    pvdc_wr_plane(t, plane, PVDC_PS_SRC_H, FP16(h));
    pvdc_wr_plane(t, plane, PVDC_PS_DST_POS, 0);
    pvdc_wr_plane(t, plane, PVDC_PS_DST_SIZE, PVDC_XY(w, h));
}

void pvdc_write_plane(PVDCTest *t, unsigned int plane, unsigned int head,
                      uint32_t offset, uint32_t zpos)
{
    pvdc_wr_plane(t, plane, PVDC_PS_HEAD, head);
    pvdc_write_fb(t, plane, PVDC_FMT_XRGB8888, offset, MODE_PITCH, MODE_W,
                  MODE_H);
    pvdc_wr_plane(t, plane, PVDC_PS_ZPOS, zpos);
    pvdc_wr_plane(t, plane, PVDC_PS_ALPHA, 0xffff);
    pvdc_wr_plane(t, plane, PVDC_PS_CTRL, PVDC_PS_CTRL_ENABLE);
}

uint32_t pvdc_wait_outcome(PVDCTest *t, unsigned int head, int64_t limit)
{
    int64_t end = pvdc_now_ns(t) + limit;

    while (pvdc_head_ctl(t, head, PVDC_HEAD_DOORBELL) && pvdc_now_ns(t) < end) {
        int64_t before = pvdc_now_ns(t);

        pvdc_step_next(t);
        if (pvdc_now_ns(t) == before) {
            break;              /* no timer: nothing will latch */
        }
    }
    g_assert_cmpuint(pvdc_head_ctl(t, head, PVDC_HEAD_DOORBELL), ==, 0);
    g_assert_cmpuint(pvdc_head_ctl(t, head, PVDC_HEAD_DONE_SEQ), ==,
                     pvdc_head_ctl(t, head, PVDC_HEAD_ARMED_SEQ));
    return pvdc_head_ctl(t, head, PVDC_HEAD_RESULT);
}

uint32_t pvdc_commit(PVDCTest *t, unsigned int head)
{
    pvdc_doorbell(t, head);
    return pvdc_wait_outcome(t, head, NANOSECONDS_PER_SECOND);
}

int64_t pvdc_shadow_period_ns(PVDCTest *t, unsigned int head)
{
    uint64_t base = PVDC_HEAD_SHADOW(head);
    uint64_t htotal = PVDC_Y(pvdc_rd(t, base + PVDC_HS_HTIMING));
    uint64_t vtotal = PVDC_Y(pvdc_rd(t, base + PVDC_HS_VTIMING));

    return htotal * vtotal * SCALE_MS / pvdc_rd(t, base + PVDC_HS_PIXEL_CLOCK);
}

int64_t pvdc_commit_enable(PVDCTest *t, unsigned int head)
{
    int64_t latch = pvdc_now_ns(t) + pvdc_shadow_period_ns(t, head);

    pvdc_doorbell(t, head);
    g_assert_cmpuint(pvdc_head_ctl(t, head, PVDC_HEAD_DOORBELL), ==, 1);
    pvdc_step_to(t, latch);
    g_assert_cmphex(pvdc_wait_outcome(t, head, 0), ==, PVDC_RESULT_APPLIED);
    return latch;
}

int64_t pvdc_enable_head(PVDCTest *t, unsigned int head, uint32_t clock_khz)
{
    pvdc_write_mode(t, head, clock_khz);
    pvdc_write_plane(t, pvdc_plane_of(t, head, PRIMARY), head, 0, 0);
    return pvdc_commit_enable(t, head);
}

uint32_t pvdc_read_crc(PVDCTest *t, unsigned int head, uint32_t *frame)
{
    uint32_t crc = pvdc_head_ctl(t, head, PVDC_HEAD_CRC_VALUE);

    *frame = pvdc_head_ctl(t, head, PVDC_HEAD_CRC_FRAME);
    return crc;
}

uint64_t pvdc_statistic_of(QTestState *qts, const char *id, const char *name)
{
    g_autofree char *path = g_strdup_printf("/machine/peripheral/%s", id);
    QDict *rsp = qtest_qmp(qts, "{ 'execute': 'qom-get', 'arguments': "
                           "{ 'path': %s, 'property': %s } }", path, name);
    uint64_t val;

    g_assert(qdict_haskey(rsp, "return"));
    val = qdict_get_int(rsp, "return");
    qobject_unref(rsp);
    return val;
}

uint64_t pvdc_statistic(QTestState *qts, const char *name)
{
    return pvdc_statistic_of(qts, "pvdc0", name);
}

uint64_t pvdc_timer_callbacks(PVDCTest *t)
{
    return pvdc_statistic(t->qts, "x-timer-callbacks");
}

void pvdc_qom_set_uint(QTestState *qts, const char *prop, uint64_t value)
{
    qtest_qmp_assert_success(qts, "{ 'execute': 'qom-set', 'arguments': "
                             "{ 'path': %s, 'property': %s, 'value': %"
                             PRIu64 " } }", PVDC_QOM_PATH, prop, value);
}

void pvdc_qom_set_bool(QTestState *qts, const char *prop, bool value)
{
    qtest_qmp_assert_success(qts, "{ 'execute': 'qom-set', 'arguments': "
                             "{ 'path': %s, 'property': %s, 'value': %i } }",
                             PVDC_QOM_PATH, prop, value);
}

uint32_t *pvdc_screendump(QTestState *qts, unsigned int head, int *width,
                          int *height)
{
    g_autofree char *path = NULL;
    g_autofree char *data = NULL;
    uint32_t *pixels;
    size_t len;
    int w, h, max, n = 0;
    const uint8_t *rgb;
    int fd = g_file_open_tmp("pvdc-qtest-XXXXXX.ppm", &path, NULL);

    g_assert_cmpint(fd, >=, 0);
    close(fd);
    qtest_qmp_assert_success(qts, "{ 'execute': 'screendump', "
                             "'arguments': { 'filename': %s, "
                             "'device': 'pvdc0', 'head': %d, "
                             "'format': 'ppm' } }", path, head);
    g_assert(g_file_get_contents(path, &data, &len, NULL));
    unlink(path);
    if (!width) {
        return NULL;
    }
    /*
     * One whitespace byte ends the header: a "\n" in the format would
     * also swallow pixel bytes that look like whitespace.
     */
    g_assert_cmpint(sscanf(data, "P6\n%d %d\n%d%n", &w, &h, &max, &n), ==,
                    3);
    g_assert_cmpint(max, ==, 255);
    g_assert_cmpint(data[n], ==, '\n');
    n++;
    g_assert_cmpuint(len, ==, n + (size_t)w * h * 3);
    rgb = (const uint8_t *)data + n;
    pixels = g_new(uint32_t, w * h);
    for (int i = 0; i < w * h; i++) {
        pixels[i] = rgb[3 * i] << 16 | rgb[3 * i + 1] << 8 | rgb[3 * i + 2];
    }
    *width = w;
    *height = h;
    return pixels;
}

uint32_t *pvdc_screendump_mode(QTestState *qts, unsigned int head)
{
    int w, h;
    uint32_t *pixels = pvdc_screendump(qts, head, &w, &h);

    g_assert_cmpint(w, ==, MODE_W);
    g_assert_cmpint(h, ==, MODE_H);
    return pixels;
}

void pvdc_assert_pictures_equal(const uint32_t *got, const uint32_t *want,
                                int tolerance)
{
    for (int i = 0; i < MODE_W * MODE_H; i++) {
        for (int s = 0; s <= 16; s += 8) {
            int d = (int)(got[i] >> s & 0xff) - (int)(want[i] >> s & 0xff);

            if (abs(d) > tolerance) {
                g_test_message("pixel (%d, %d): got 0x%06x, want 0x%06x",
                               i % MODE_W, i / MODE_W, got[i], want[i]);
                g_assert_cmpint(abs(d), <=, tolerance);
            }
        }
    }
}

bool pvdc_migration_wait(QTestState *qts)
{
    for (;;) {
        QDict *rsp = qtest_qmp(qts, "{ 'execute': 'query-migrate' }");
        const char *status = qdict_get_try_str(qdict_get_qdict(rsp, "return"),
                                               "status");
        bool done = status && !strcmp(status, "completed");
        bool failed = status && !strcmp(status, "failed");

        qobject_unref(rsp);
        if (done || failed) {
            return done;
        }
        g_usleep(1000);
    }
}

void pvdc_migrate(QTestState *from, QTestState *to, const char *uri)
{
    qtest_qmp_assert_success(from, "{ 'execute': 'migrate', 'arguments': "
                             "{ 'uri': %s } }", uri);
    g_assert_true(pvdc_migration_wait(from));
    qtest_qmp_eventwait(to, "RESUME");
}

void pvdc_test_migrate(PVDCTest *src, PVDCTest *dst, const char *props,
                       const char *extra)
{
    g_autofree char *dir = g_dir_make_tmp("pvdc-migrate-XXXXXX", NULL);
    g_autofree char *sock = g_strdup_printf("%s/migrate", dir);
    g_autofree char *uri = g_strdup_printf("unix:%s", sock);
    g_autofree char *args = g_strdup_printf("%s -incoming %s",
                                            extra ? extra : "", uri);
    QTestState *qts = pvdc_test_spawn(props, args);

    pvdc_migrate(src->qts, qts, uri);
    g_assert_cmpint(qtest_clock_set(qts, src->now), ==, src->now);
    pvdc_test_attach(dst, qts);
    dst->now = src->now;
    unlink(sock);
    rmdir(dir);
}

void pvdc_write_bind_table(PVDCTest *t, uint64_t table, const uint64_t *entries,
                           size_t n)
{
    g_autofree uint64_t *le = g_new(uint64_t, 2 * n);

    for (size_t i = 0; i < 2 * n; i++) {
        le[i] = cpu_to_le64(entries[i]);
    }
    qtest_bufwrite(t->qts, table, le, 2 * n * sizeof(uint64_t));
}

/*
 * Run BIND_CMD @cmd on [@addr, @addr + @size) with @n entries at @table;
 * returns BIND_STATUS.
 */
static uint32_t pvdc_bind_cmd(PVDCTest *t, uint32_t cmd, uint32_t addr,
                              uint32_t size, uint64_t table, uint32_t n)
{
    pvdc_wr(t, PVDC_REG_BIND_ADDR, addr);
    pvdc_wr(t, PVDC_REG_BIND_SIZE, size);
    pvdc_wr(t, PVDC_REG_BIND_TABLE_LO, (uint32_t)table);
    pvdc_wr(t, PVDC_REG_BIND_TABLE_HI, table >> 32);
    pvdc_wr(t, PVDC_REG_BIND_ENTRIES, n);
    pvdc_wr(t, PVDC_REG_BIND_CMD, cmd);
    return pvdc_rd(t, PVDC_REG_BIND_STATUS);
}

uint32_t pvdc_bind_range(PVDCTest *t, uint32_t addr, uint32_t size,
                         uint64_t table, uint32_t n)
{
    return pvdc_bind_cmd(t, PVDC_BIND_CMD_BIND, addr, size, table, n);
}

uint32_t pvdc_unbind_range(PVDCTest *t, uint32_t addr, uint32_t size)
{
    return pvdc_bind_cmd(t, PVDC_BIND_CMD_UNBIND, addr, size, 0, 0);
}

uint32_t pvdc_frame_crc(const uint32_t *pixels, size_t n)
{
    uint32_t crc = 0xffffffff;

    for (size_t i = 0; i < n; i++) {
        uint32_t px = pixels[i] & 0x00ffffff;

        for (int byte = 0; byte < 4; byte++) {
            crc ^= (px >> (byte * 8)) & 0xff;
            for (int bit = 0; bit < 8; bit++) {
                crc = (crc >> 1) ^ (0xedb88320 & -(crc & 1));
            }
        }
    }
    return ~crc;
}

void pvdc_assert_reset_state(PVDCTest *t)
{
    uint32_t bandwidth = pvdc_rd(t, PVDC_REG_BANDWIDTH_TOTAL) / t->heads;
    unsigned int h, p, r;

    for (h = 0; h < t->heads; h++) {
        for (r = 0; r < PVDC_HEAD_STATE_REGS; r++) {
            /* head h drives connector h */
            uint32_t expect = r * 4 == PVDC_HS_BANDWIDTH ? bandwidth :
                              r * 4 == PVDC_HS_CONNECTOR ? h : 0;

            g_assert_cmphex(pvdc_rd(t, PVDC_HEAD_SHADOW(h) + r * 4), ==,
                            expect);
            g_assert_cmphex(pvdc_rd(t, PVDC_HEAD_ACTIVE(h) + r * 4), ==,
                            expect);
        }
        g_assert_cmpuint(pvdc_head_ctl(t, h, PVDC_HEAD_DOORBELL), ==, 0);
        g_assert_cmpuint(pvdc_head_ctl(t, h, PVDC_HEAD_ARMED_SEQ), ==, 0);
        g_assert_cmpuint(pvdc_head_ctl(t, h, PVDC_HEAD_DONE_SEQ), ==, 0);
        g_assert_cmpuint(pvdc_head_ctl(t, h, PVDC_HEAD_RESULT), ==,
                         PVDC_RESULT_NONE);
        g_assert_cmpuint(pvdc_head_ctl(t, h, PVDC_HEAD_VBLANK_COUNT), ==, 0);
        g_assert_cmpuint(pvdc_head_ctl(t, h, PVDC_HEAD_FRAME_PERIOD), ==, 0);
        g_assert_cmpuint(pvdc_head_ctl(t, h, PVDC_HEAD_STATUS), ==, 0);
        g_assert_cmpuint(pvdc_head_ctl(t, h, PVDC_HEAD_CRC_CTRL), ==, 0);
    }
    for (p = 0; p < t->planes; p++) {
        uint32_t caps = pvdc_rd(t, PVDC_REG_PLANE_CAPS(p));
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

            g_assert_cmphex(pvdc_rd(t, PVDC_PLANE_SHADOW(p) + r * 4), ==,
                            expect);
            g_assert_cmphex(pvdc_rd(t, PVDC_PLANE_ACTIVE(p) + r * 4), ==,
                            expect);
        }
    }
    g_assert_cmphex(pvdc_rd(t, PVDC_REG_INT_STATUS), ==, 0);
    g_assert_cmphex(pvdc_rd(t, PVDC_REG_INT_ENABLE), ==, 0);
    g_assert_cmphex(pvdc_rd(t, PVDC_REG_MULTI_DOORBELL), ==, 0);
}

void pvdc_shrink_plane(PVDCTest *t, unsigned int plane)
{
    pvdc_wr_plane(t, plane, PVDC_PS_SRC_W, FP16(16));
    pvdc_wr_plane(t, plane, PVDC_PS_SRC_H, FP16(16));
    pvdc_wr_plane(t, plane, PVDC_PS_DST_SIZE, PVDC_XY(16, 16));
}

int pvdc_find_intx_gsi(PVDCTest *t)
{
    int gsi = -1;

    g_assert_cmphex(pvdc_rd(t, PVDC_REG_INT_STATUS), !=, 0);
    pvdc_wr(t, PVDC_REG_INT_ENABLE, MAKE_64BIT_MASK(0, 4 * t->heads));
    for (int i = 0; i < 24; i++) {
        if (qtest_get_irq(t->qts, i)) {
            g_assert_cmpint(gsi, ==, -1);
            gsi = i;
        }
    }
    g_assert_cmpint(gsi, >=, 0);
    pvdc_wr(t, PVDC_REG_INT_ENABLE, 0);
    g_assert_false(qtest_get_irq(t->qts, gsi));
    return gsi;
}

void pvdc_enable_good_head0(PVDCTest *t)
{
    pvdc_write_mode(t, 0, CLOCK_1MS);
    pvdc_write_plane(t, pvdc_plane_of(t, 0, PRIMARY), 0, PVDC_GOOD_OFFSET, 0);
    g_assert_cmphex(pvdc_commit(t, 0), ==, PVDC_RESULT_APPLIED);
}

void pvdc_compose_again(PVDCTest *t, unsigned int head)
{
    pvdc_screendump(t->qts, head, NULL, NULL);
}

uint8_t *pvdc_fill_vram(PVDCTest *t, uint64_t offset, size_t len,
                        uint32_t seed)
{
    uint8_t *data = g_malloc(len);

    for (size_t i = 0; i < len; i++) {
        data[i] = (i * 131 + seed * 7 + (i >> 8)) & 0xff;
    }
    qtest_memwrite(t->qts, t->vram.addr + offset, data, len);
    return data;
}

void pvdc_assert_still_works(PVDCTest *t, const PVDCSnapshot *before)
{
    unsigned int primary = pvdc_plane_of(t, 0, PRIMARY);
    uint32_t shadow = pvdc_rd(t,
                              PVDC_PLANE_SHADOW(primary) + PVDC_PS_FB_OFFSET);

    g_assert_cmphex(pvdc_rd(t, PVDC_REG_ID), ==, PVDC_ID);
    g_assert_cmpuint(pvdc_rd(t, PVDC_REG_NUM_HEADS), ==, t->heads);
    pvdc_assert_active_is(t, before);
    g_assert_cmphex(pvdc_head_ctl(t, 0, PVDC_HEAD_DOORBELL), ==, 0);

    pvdc_wr_plane(t, primary, PVDC_PS_FB_OFFSET, PVDC_FLIP_OFFSET);
    g_assert_cmphex(pvdc_commit(t, 0), ==, PVDC_RESULT_APPLIED);
    g_assert_cmphex(pvdc_rd(t, PVDC_PLANE_ACTIVE(primary) + PVDC_PS_FB_OFFSET),
                    ==, PVDC_FLIP_OFFSET);
    pvdc_wr_plane(t, primary, PVDC_PS_FB_OFFSET,
                  before->plane[primary][PVDC_PS_FB_OFFSET / 4]);
    g_assert_cmphex(pvdc_commit(t, 0), ==, PVDC_RESULT_APPLIED);
    pvdc_assert_active_is(t, before);
    pvdc_wr_plane(t, primary, PVDC_PS_FB_OFFSET, shadow);
}

const uint32_t pvdc_formats[9] = {
    PVDC_FMT_XRGB8888, PVDC_FMT_ARGB8888, PVDC_FMT_XBGR8888,
    PVDC_FMT_ABGR8888, PVDC_FMT_RGB565, PVDC_FMT_XRGB2101010,
    PVDC_FMT_YUYV, PVDC_FMT_NV12, PVDC_FMT_P010,
};
