/*
 * What the pvdc qtests share: starting a machine with the device, register
 * access, the qtest clock, snapshots of the active state, the test mode and
 * planes, commits, device statistics and properties, screendumps,
 * migration and the frame CRC as the device defines it.
 *
 * Time only moves through the qtest clock (step_to(), step_next(),
 * step_to_next_vblank()): every expectation about a vblank or a latch
 * point is exact to the nanosecond.
 *
 * Copyright (c) 2026 The pvdc authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TESTS_QTEST_PVDC_QTEST_H
#define TESTS_QTEST_PVDC_QTEST_H

#include "qemu/units.h"
#include "qemu/timer.h"
#include "hw/pci/pci_regs.h"
#include "libqtest.h"
#include "libqos/pci.h"
#include "libqos/pci-pc.h"
#include "qobject/qdict.h"
#include "hw/display/pvdc-regs.h"

#define PVDC_QOM_PATH       "/machine/peripheral/pvdc0"

/* The test mode: 64x48 pixels in an 80x50 frame. */
#define MODE_W              64
#define MODE_H              48
#define MODE_HTOTAL         80
#define MODE_VTOTAL         50
#define MODE_CPP            4           /* XRGB8888 */
#define MODE_PITCH          (MODE_W * MODE_CPP)
/* kHz is pixels per ms: a frame of exactly 1 ms. */
#define CLOCK_1MS           (MODE_HTOTAL * MODE_VTOTAL)
/* A frame of exactly 2 ms. */
#define CLOCK_2MS           (CLOCK_1MS / 2)
#define PERIOD_1MS          ((int64_t)SCALE_MS)
#define FP16(x)             ((uint32_t)(x) << 16)
/* A signed 16-bit field of a PVDC_XY() register. */
#define S16(x)              ((uint32_t)(uint16_t)(int16_t)(x))

/* The plane layout of a head, in the order PLANE_CAPS numbers them. */
#define PRIMARY             0
#define OVERLAY(i)          (1 + (i))

typedef struct PVDCTest {
    QTestState *qts;
    QPCIBus *bus;
    QPCIDevice *dev;
    QPCIBar mmio;
    QPCIBar vram;
    uint32_t heads;
    uint32_t overlays;
    uint32_t planes;
    uint64_t vram_size;
    uint32_t max_w, max_h;
    int64_t now;            /* QEMU_CLOCK_VIRTUAL, as last set */
} PVDCTest;

/* The state windows of every head and plane, as read through BAR0. */
typedef struct Snapshot {
    uint32_t head[PVDC_MAX_HEADS][PVDC_HEAD_STATE_REGS];
    uint32_t plane[PVDC_MAX_PLANES][PVDC_PLANE_STATE_REGS];
} Snapshot;

static inline uint32_t rd(PVDCTest *t, uint64_t reg)
{
    return qpci_io_readl(t->dev, t->mmio, reg);
}

static inline void wr(PVDCTest *t, uint64_t reg, uint32_t val)
{
    qpci_io_writel(t->dev, t->mmio, reg, val);
}

static inline void wr_head(PVDCTest *t, unsigned int head, uint32_t reg,
                           uint32_t val)
{
    wr(t, PVDC_HEAD_SHADOW(head) + reg, val);
}

static inline void wr_plane(PVDCTest *t, unsigned int plane, uint32_t reg,
                            uint32_t val)
{
    wr(t, PVDC_PLANE_SHADOW(plane) + reg, val);
}

static inline uint32_t head_ctl(PVDCTest *t, unsigned int head, uint32_t reg)
{
    return rd(t, PVDC_HEAD_CONTROL(head) + reg);
}

/*
 * libqos places BARs in the 512 MiB below 4 GiB, BAR 0 first.  VRAM that
 * does not fit there (512 MiB, the default of two heads) goes to the
 * 512 MiB below them, between q35's MMCONFIG and the libqos window.  More
 * goes above 4 GiB, as its 64-bit BAR allows: there only qtest_memread()
 * and qtest_memwrite() reach it, libqos' PC bus takes 32-bit addresses.
 */
#define PVDC_TEST_VRAM_LOW      0xc0000000ULL
#define PVDC_TEST_VRAM_LOW_MAX  (512 * MiB)
#define PVDC_TEST_VRAM_HIGH     (64 * GiB)

static inline QPCIBar pvdc_test_map_vram(PVDCTest *t)
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

static inline void pvdc_test_map(PVDCTest *t)
{
    uint32_t max;

    qpci_device_enable(t->dev);
    t->mmio = qpci_iomap(t->dev, PVDC_MMIO_BAR, NULL);
    t->vram_size = rd(t, PVDC_REG_VRAM_SIZE_LO) |
                   (uint64_t)rd(t, PVDC_REG_VRAM_SIZE_HI) << 32;
    t->vram = pvdc_test_map_vram(t);
    t->heads = rd(t, PVDC_REG_NUM_HEADS);
    t->overlays = rd(t, PVDC_REG_NUM_OVERLAYS);
    t->planes = rd(t, PVDC_REG_NUM_PLANES);
    max = rd(t, PVDC_REG_MAX_SIZE);
    t->max_w = PVDC_X(max);
    t->max_h = PVDC_Y(max);
}

static inline void pvdc_test_attach(PVDCTest *t, QTestState *qts)
{
    t->qts = qts;
    t->bus = qpci_new_pc(t->qts, NULL);
    t->dev = qpci_device_find(t->bus, QPCI_DEVFN(4, 0));
    g_assert_nonnull(t->dev);
    pvdc_test_map(t);
}

/*
 * A q35 machine with pvdc (id pvdc0) at 04.0, @props added to -device and
 * @extra to the command line.
 */
static inline QTestState *pvdc_test_spawn(const char *props,
                                          const char *extra)
{
    return qtest_initf("-machine q35 -nodefaults "
                       "-device pvdc,addr=04.0,id=pvdc0%s%s %s",
                       props ? "," : "", props ? props : "",
                       extra ? extra : "");
}

static inline void pvdc_test_start_with(PVDCTest *t, const char *props,
                                        const char *extra)
{
    pvdc_test_attach(t, pvdc_test_spawn(props, extra));
    t->now = qtest_clock_step(t->qts, 1);
}

static inline void pvdc_test_start(PVDCTest *t, const char *props)
{
    pvdc_test_start_with(t, props, NULL);
}

static inline void pvdc_test_detach(PVDCTest *t)
{
    g_free(t->dev);
    qpci_free_pc(t->bus);
}

static inline void pvdc_test_stop(PVDCTest *t)
{
    pvdc_test_detach(t);
    qtest_quit(t->qts);
}

static inline int64_t now_ns(PVDCTest *t)
{
    return t->now;
}

static inline void step_to(PVDCTest *t, int64_t when)
{
    g_assert_cmpint(when, >=, t->now);
    if (when > t->now) {
        t->now = qtest_clock_set(t->qts, when);
        g_assert_cmpint(t->now, ==, when);
    }
}

/* Up to the next timer deadline of the machine. */
static inline void step_next(PVDCTest *t)
{
    t->now = qtest_clock_step_next(t->qts);
}

static inline uint64_t period_ns(uint32_t clock_khz)
{
    return (uint64_t)MODE_HTOTAL * MODE_VTOTAL * SCALE_MS / clock_khz;
}

static inline unsigned int plane_of(PVDCTest *t, unsigned int head,
                                    unsigned int index)
{
    return head * (t->overlays + 2) + index;
}

static inline unsigned int cursor_of(PVDCTest *t, unsigned int head)
{
    return plane_of(t, head, t->overlays + 1);
}

/* Registers @reg.. into @val, in one qtest round trip. */
static inline void rd_block(PVDCTest *t, uint64_t reg, uint32_t *val,
                            unsigned int count)
{
    qtest_memread(t->qts, t->mmio.addr + reg, val, count * sizeof(*val));
    for (unsigned int i = 0; i < count; i++) {
        val[i] = le32_to_cpu(val[i]);
    }
}

/* The head and plane windows at @head_base and @plane_base. */
static inline void snapshot_window(PVDCTest *t, Snapshot *snap,
                                   uint64_t head_base, uint64_t plane_base)
{
    memset(snap, 0, sizeof(*snap));
    for (unsigned int i = 0; i < t->heads; i++) {
        rd_block(t, head_base + i * PVDC_HEAD_STRIDE, snap->head[i],
                 PVDC_HEAD_STATE_REGS);
    }
    for (unsigned int i = 0; i < t->planes; i++) {
        rd_block(t, plane_base + i * PVDC_PLANE_STRIDE, snap->plane[i],
                 PVDC_PLANE_STATE_REGS);
    }
}

static inline void snapshot_active(PVDCTest *t, Snapshot *snap)
{
    snapshot_window(t, snap, PVDC_HEAD_ACTIVE_BASE, PVDC_PLANE_ACTIVE_BASE);
}

static inline void snapshot_shadow(PVDCTest *t, Snapshot *snap)
{
    snapshot_window(t, snap, PVDC_HEAD_SHADOW_BASE, PVDC_PLANE_SHADOW_BASE);
}

static inline void assert_active_is(PVDCTest *t, const Snapshot *expected)
{
    Snapshot now;

    snapshot_active(t, &now);
    g_assert(memcmp(&now, expected, sizeof(now)) == 0);
}

static inline void doorbell(PVDCTest *t, unsigned int head)
{
    wr(t, PVDC_HEAD_CONTROL(head) + PVDC_HEAD_DOORBELL, 1);
}

static inline uint64_t vblank_time(PVDCTest *t, unsigned int head)
{
    uint32_t lo = head_ctl(t, head, PVDC_HEAD_VBLANK_TIME_LO);

    return lo | (uint64_t)head_ctl(t, head, PVDC_HEAD_VBLANK_TIME_HI) << 32;
}

/* To the next vblank of @head, an enabled head. */
static inline void step_to_next_vblank(PVDCTest *t, unsigned int head)
{
    uint32_t period = head_ctl(t, head, PVDC_HEAD_FRAME_PERIOD);

    g_assert_cmpuint(period, !=, 0);
    step_to(t, vblank_time(t, head) + period);
}

/*
 * The shadow state of a mode of @w x @h active pixels in an @htotal x
 * @vtotal frame at @clock_khz, enabled.
 */
static inline void write_mode_sized(PVDCTest *t, unsigned int head,
                                    uint32_t w, uint32_t h, uint32_t htotal,
                                    uint32_t vtotal, uint32_t clock_khz)
{
    wr_head(t, head, PVDC_HS_HTIMING, PVDC_XY(w, htotal));
    wr_head(t, head, PVDC_HS_HSYNC, PVDC_XY(w, htotal));
    wr_head(t, head, PVDC_HS_VTIMING, PVDC_XY(h, vtotal));
    wr_head(t, head, PVDC_HS_VSYNC, PVDC_XY(h, vtotal));
    wr_head(t, head, PVDC_HS_PIXEL_CLOCK, clock_khz);
    wr_head(t, head, PVDC_HS_CTRL, PVDC_HS_CTRL_ENABLE);
}

/* The shadow state of the 64x48 test mode at @clock_khz, enabled. */
static inline void write_mode(PVDCTest *t, unsigned int head,
                              uint32_t clock_khz)
{
    write_mode_sized(t, head, MODE_W, MODE_H, MODE_HTOTAL, MODE_VTOTAL,
                     clock_khz);
}

/* Framebuffer registers, and an unscaled full-fb source and destination. */
static inline void write_fb(PVDCTest *t, unsigned int plane, uint32_t format,
                            uint64_t offset, uint32_t pitch, uint32_t w,
                            uint32_t h)
{
    wr_plane(t, plane, PVDC_PS_FORMAT, format);
    wr_plane(t, plane, PVDC_PS_FB_OFFSET, offset);
    wr_plane(t, plane, PVDC_PS_FB_PITCH, pitch);
    wr_plane(t, plane, PVDC_PS_FB_SIZE, PVDC_XY(w, h));
    wr_plane(t, plane, PVDC_PS_SRC_X, 0);
    wr_plane(t, plane, PVDC_PS_SRC_Y, 0);
    wr_plane(t, plane, PVDC_PS_SRC_W, FP16(w));
    wr_plane(t, plane, PVDC_PS_SRC_H, FP16(h));
    wr_plane(t, plane, PVDC_PS_DST_POS, 0);
    wr_plane(t, plane, PVDC_PS_DST_SIZE, PVDC_XY(w, h));
}

/*
 * The shadow state of an opaque, unscaled, full-screen XRGB8888 plane of
 * the test mode, enabled on @head.
 */
static inline void write_plane(PVDCTest *t, unsigned int plane,
                               unsigned int head, uint32_t offset,
                               uint32_t zpos)
{
    wr_plane(t, plane, PVDC_PS_HEAD, head);
    write_fb(t, plane, PVDC_FMT_XRGB8888, offset, MODE_PITCH, MODE_W, MODE_H);
    wr_plane(t, plane, PVDC_PS_ZPOS, zpos);
    wr_plane(t, plane, PVDC_PS_ALPHA, 0xffff);
    wr_plane(t, plane, PVDC_PS_CTRL, PVDC_PS_CTRL_ENABLE);
}

static inline uint32_t result_of(uint32_t code, unsigned int plane)
{
    return code | plane << PVDC_RESULT_PLANE_SHIFT;
}

static inline uint32_t head_result(uint32_t code)
{
    return result_of(code, PVDC_RESULT_PLANE_NONE);
}

/* The outcome of the last doorbell on @head, within @limit ns. */
static inline uint32_t wait_outcome(PVDCTest *t, unsigned int head,
                                    int64_t limit)
{
    int64_t end = now_ns(t) + limit;

    while (head_ctl(t, head, PVDC_HEAD_DOORBELL) && now_ns(t) < end) {
        int64_t before = now_ns(t);

        step_next(t);
        if (now_ns(t) == before) {
            break;              /* no timer: nothing will latch */
        }
    }
    g_assert_cmpuint(head_ctl(t, head, PVDC_HEAD_DOORBELL), ==, 0);
    g_assert_cmpuint(head_ctl(t, head, PVDC_HEAD_DONE_SEQ), ==,
                     head_ctl(t, head, PVDC_HEAD_ARMED_SEQ));
    return head_ctl(t, head, PVDC_HEAD_RESULT);
}

/*
 * Ring @head's doorbell and return the outcome, at the latch point (the
 * next vblank; a frame of the new mode later for a head it enables; at
 * once for a head that is and stays disabled).
 */
static inline uint32_t commit(PVDCTest *t, unsigned int head)
{
    doorbell(t, head);
    return wait_outcome(t, head, NANOSECONDS_PER_SECOND);
}

/* The frame period of the mode in @head's shadow registers. */
static inline int64_t shadow_period_ns(PVDCTest *t, unsigned int head)
{
    uint64_t base = PVDC_HEAD_SHADOW(head);
    uint64_t htotal = PVDC_Y(rd(t, base + PVDC_HS_HTIMING));
    uint64_t vtotal = PVDC_Y(rd(t, base + PVDC_HS_VTIMING));

    return htotal * vtotal * SCALE_MS / rd(t, base + PVDC_HS_PIXEL_CLOCK);
}

/*
 * Ring @head's doorbell for a commit that enables it, from a disabled
 * head and no link-up delay: it is armed, not applied, until the first
 * vblank of the new timeline, one frame of its mode later, where it
 * applies.  Returns that latch time, which is vblank 0 of the timeline.
 */
static inline int64_t commit_enable(PVDCTest *t, unsigned int head)
{
    int64_t latch = now_ns(t) + shadow_period_ns(t, head);

    doorbell(t, head);
    g_assert_cmpuint(head_ctl(t, head, PVDC_HEAD_DOORBELL), ==, 1);
    step_to(t, latch);
    g_assert_cmphex(wait_outcome(t, head, 0), ==, PVDC_RESULT_APPLIED);
    return latch;
}

/*
 * Enable @head with the test mode and its primary plane at VRAM offset 0,
 * from a disabled head and no link-up delay (commit_enable()).  Returns
 * the enable time, which is vblank 0 of the new timeline.
 */
static inline int64_t enable_head(PVDCTest *t, unsigned int head,
                                  uint32_t clock_khz)
{
    write_mode(t, head, clock_khz);
    write_plane(t, plane_of(t, head, PRIMARY), head, 0, 0);
    return commit_enable(t, head);
}

/*
 * The CRC of the current frame of @head and, in @frame, the vblank count
 * it belongs to: CRC_VALUE first, as the spec says to read them.
 */
static inline uint32_t frame_crc(PVDCTest *t, unsigned int head,
                                 uint32_t *frame)
{
    uint32_t crc = head_ctl(t, head, PVDC_HEAD_CRC_VALUE);

    *frame = head_ctl(t, head, PVDC_HEAD_CRC_FRAME);
    return crc;
}

/* A read-only statistic of the device with id @id (qom-get). */
static inline uint64_t qtest_statistic(QTestState *qts, const char *id,
                                       const char *name)
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

/* A read-only statistic of the device under test (pvdc0). */
static inline uint64_t pvdc_statistic(QTestState *qts, const char *name)
{
    return qtest_statistic(qts, "pvdc0", name);
}

static inline uint64_t timer_callbacks(PVDCTest *t)
{
    return pvdc_statistic(t->qts, "x-timer-callbacks");
}

static inline void qom_set_uint(QTestState *qts, const char *prop,
                                uint64_t value)
{
    qtest_qmp_assert_success(qts, "{ 'execute': 'qom-set', 'arguments': "
                             "{ 'path': %s, 'property': %s, 'value': %"
                             PRIu64 " } }", PVDC_QOM_PATH, prop, value);
}

static inline void qom_set_bool(QTestState *qts, const char *prop,
                                bool value)
{
    qtest_qmp_assert_success(qts, "{ 'execute': 'qom-set', 'arguments': "
                             "{ 'path': %s, 'property': %s, 'value': %i } }",
                             PVDC_QOM_PATH, prop, value);
}

/*
 * Console @head as a QMP screendump shows it, 0x00RRGGBB per pixel, of
 * @width x @height pixels (NULLs: only compose it, through the console).
 * QMP's "head" is the console index, which is the connector's: the
 * picture of the head that drives connector @head.
 */
static inline uint32_t *screendump(QTestState *qts, unsigned int head,
                                   int *width, int *height)
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

/*
 * Wait until the migration of @qts (either side) ends; returns whether it
 * completed.  Migration runs on the host's clock, not the qtest one: poll
 * it, as the QEMU migration tests do.
 */
static inline bool pvdc_migration_wait(QTestState *qts)
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

/* Migrate @from to @to (started with -incoming @uri); wait until @to runs. */
static inline void pvdc_migrate(QTestState *from, QTestState *to,
                                const char *uri)
{
    qtest_qmp_assert_success(from, "{ 'execute': 'migrate', 'arguments': "
                             "{ 'uri': %s } }", uri);
    g_assert_true(pvdc_migration_wait(from));
    qtest_qmp_eventwait(to, "RESUME");
}

/*
 * Migrate @src to a new machine, started with @props and @extra as
 * pvdc_test_spawn() takes them, through a UNIX socket; @dst gets it at the
 * same instant of the qtest clock (the clock is the test's: it is carried
 * over as a host would).
 */
static inline void pvdc_test_migrate(PVDCTest *src, PVDCTest *dst,
                                     const char *props, const char *extra)
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

/*
 * Write the BIND table of @n entries (@entries[2 * i]: address,
 * @entries[2 * i + 1]: length) into guest memory at @table, little-endian.
 */
static inline void write_bind_table(PVDCTest *t, uint64_t table,
                                    const uint64_t *entries, size_t n)
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
static inline uint32_t bind_cmd(PVDCTest *t, uint32_t cmd, uint32_t addr,
                                uint32_t size, uint64_t table, uint32_t n)
{
    wr(t, PVDC_REG_BIND_ADDR, addr);
    wr(t, PVDC_REG_BIND_SIZE, size);
    wr(t, PVDC_REG_BIND_TABLE_LO, (uint32_t)table);
    wr(t, PVDC_REG_BIND_TABLE_HI, table >> 32);
    wr(t, PVDC_REG_BIND_ENTRIES, n);
    wr(t, PVDC_REG_BIND_CMD, cmd);
    return rd(t, PVDC_REG_BIND_STATUS);
}

static inline uint32_t bind_range(PVDCTest *t, uint32_t addr, uint32_t size,
                                  uint64_t table, uint32_t n)
{
    return bind_cmd(t, PVDC_BIND_CMD_BIND, addr, size, table, n);
}

static inline uint32_t unbind_range(PVDCTest *t, uint32_t addr,
                                    uint32_t size)
{
    return bind_cmd(t, PVDC_BIND_CMD_UNBIND, addr, size, 0, 0);
}

/*
 * The frame CRC as docs/specs/pvdc.rst defines it: CRC-32 (IEEE 802.3, as
 * zlib's crc32()) over the pixels as little-endian 0x00RRGGBB words, the
 * X byte counting as zero.  Written bit by bit, independently of the
 * device's table-driven one.
 */
static inline uint32_t pvdc_frame_crc(const uint32_t *pixels, size_t n)
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

#endif /* TESTS_QTEST_PVDC_QTEST_H */
