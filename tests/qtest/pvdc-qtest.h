/*
 * What the pvdc qtests share: starting a machine with the device, register
 * access, the qtest clock, snapshots of the active state, commits, device
 * statistics and the frame CRC as the device defines it.
 *
 * Time only moves through the qtest clock (step_to(), step_next()): every
 * expectation about a vblank or a latch point is exact to the nanosecond.
 *
 * Copyright (c) 2026 The pvdc authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TESTS_QTEST_PVDC_QTEST_H
#define TESTS_QTEST_PVDC_QTEST_H

#include "qemu/units.h"
#include "qemu/timer.h"
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
#define FP16(x)             ((uint32_t)(x) << 16)

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

static inline void pvdc_test_map(PVDCTest *t)
{
    uint32_t max;

    qpci_device_enable(t->dev);
    t->mmio = qpci_iomap(t->dev, PVDC_MMIO_BAR, NULL);
    t->vram = qpci_iomap(t->dev, PVDC_VRAM_BAR, NULL);
    t->heads = rd(t, PVDC_REG_NUM_HEADS);
    t->overlays = rd(t, PVDC_REG_NUM_OVERLAYS);
    t->planes = rd(t, PVDC_REG_NUM_PLANES);
    t->vram_size = rd(t, PVDC_REG_VRAM_SIZE_LO) |
                   (uint64_t)rd(t, PVDC_REG_VRAM_SIZE_HI) << 32;
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

/* A q35 machine with pvdc (id pvdc0) at 04.0, @props added to -device. */
static inline QTestState *pvdc_test_spawn(const char *props,
                                          const char *extra)
{
    return qtest_initf("-machine q35 -nodefaults "
                       "-device pvdc,addr=04.0,id=pvdc0%s%s %s",
                       props ? "," : "", props ? props : "",
                       extra ? extra : "");
}

static inline void pvdc_test_start(PVDCTest *t, const char *props)
{
    pvdc_test_attach(t, pvdc_test_spawn(props, NULL));
    t->now = qtest_clock_step(t->qts, 1);
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
        step_next(t);
    }
    g_assert_cmpuint(head_ctl(t, head, PVDC_HEAD_DOORBELL), ==, 0);
    g_assert_cmpuint(head_ctl(t, head, PVDC_HEAD_DONE_SEQ), ==,
                     head_ctl(t, head, PVDC_HEAD_ARMED_SEQ));
    return head_ctl(t, head, PVDC_HEAD_RESULT);
}

/* A read-only statistic of the device (qom-get on pvdc0). */
static inline uint64_t pvdc_statistic(QTestState *qts, const char *name)
{
    QDict *rsp = qtest_qmp(qts, "{ 'execute': 'qom-get', 'arguments': "
                           "{ 'path': %s, 'property': %s } }",
                           PVDC_QOM_PATH, name);
    uint64_t val;

    g_assert(qdict_haskey(rsp, "return"));
    val = qdict_get_int(rsp, "return");
    qobject_unref(rsp);
    return val;
}

static inline uint64_t timer_callbacks(PVDCTest *t)
{
    return pvdc_statistic(t->qts, "x-timer-callbacks");
}

/*
 * Migrate @from to @to (started with -incoming @uri) and wait until @to
 * runs.  Migration runs on the host's clock, not the qtest one: poll it.
 */
static inline void pvdc_migrate(QTestState *from, QTestState *to,
                                const char *uri)
{
    QDict *rsp;
    const char *status;

    qtest_qmp_assert_success(from, "{ 'execute': 'migrate', 'arguments': "
                             "{ 'uri': %s } }", uri);
    for (;;) {
        rsp = qtest_qmp(from, "{ 'execute': 'query-migrate' }");
        status = qdict_get_try_str(qdict_get_qdict(rsp, "return"), "status");
        g_assert(!status || strcmp(status, "failed") != 0);
        if (status && !strcmp(status, "completed")) {
            qobject_unref(rsp);
            break;
        }
        qobject_unref(rsp);
        g_usleep(1000);
    }
    qtest_qmp_eventwait(to, "RESUME");
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
