/*
 * The pvdc qtest library (pvdc-qtest.c), linked into every pvdc qtest:
 * starting a machine with the device, register access, the qtest clock,
 * snapshots of the active state, the test mode and planes, commits, device
 * statistics and properties, screendumps, migration, guest-memory bindings
 * and the frame CRC as the device defines it.  Its names start with pvdc_
 * (PVDC for types); the register map's macros keep PVDC_.
 *
 * Time only moves through the qtest clock (pvdc_step_to(), pvdc_step_next(),
 * pvdc_step_to_next_vblank()): every expectation about a vblank or a latch
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

/*
 * A device with tight limits, where every rule can be broken: two overlays
 * per head, one scaler and 20 KiB of bandwidth per head (a 64x48 XRGB8888
 * plane needs 12 KiB).  Every rule test starts from its head 0 enabled
 * (64x48, 1 ms frames) with its primary plane.
 */
#define RULE_PROPS  "heads=2,overlays=2,scalers=1,bandwidth-kib=40"
#define RULE_HEAD_BANDWIDTH 20

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
typedef struct PVDCSnapshot {
    uint32_t head[PVDC_MAX_HEADS][PVDC_HEAD_STATE_REGS];
    uint32_t plane[PVDC_MAX_PLANES][PVDC_PLANE_STATE_REGS];
} PVDCSnapshot;

static inline uint32_t pvdc_rd(PVDCTest *t, uint64_t reg)
{
    return qpci_io_readl(t->dev, t->mmio, reg);
}

static inline void pvdc_wr(PVDCTest *t, uint64_t reg, uint32_t val)
{
    qpci_io_writel(t->dev, t->mmio, reg, val);
}

static inline void pvdc_wr_head(PVDCTest *t, unsigned int head, uint32_t reg,
                                uint32_t val)
{
    pvdc_wr(t, PVDC_HEAD_SHADOW(head) + reg, val);
}

static inline void pvdc_wr_plane(PVDCTest *t, unsigned int plane, uint32_t reg,
                                 uint32_t val)
{
    pvdc_wr(t, PVDC_PLANE_SHADOW(plane) + reg, val);
}

static inline uint32_t pvdc_head_ctl(PVDCTest *t, unsigned int head,
                                     uint32_t reg)
{
    return pvdc_rd(t, PVDC_HEAD_CONTROL(head) + reg);
}


/*
 * Enable @t's device, map its BARs and read its dimensions (heads,
 * planes, VRAM size, largest mode) into @t.
 */
void pvdc_test_map(PVDCTest *t);

/* @t for the pvdc at 04.0 of the machine @qts, mapped. */
void pvdc_test_attach(PVDCTest *t, QTestState *qts);

/*
 * A q35 machine with pvdc (id pvdc0) at 04.0, @props added to -device and
 * @extra to the command line.
 */
QTestState *pvdc_test_spawn(const char *props, const char *extra);

/*
 * Start a machine as pvdc_test_spawn() does and attach @t to it; the
 * qtest clock stands at 1 ns.
 */
void pvdc_test_start_with(PVDCTest *t, const char *props, const char *extra);

/* pvdc_test_start_with() and nothing more on the command line. */
void pvdc_test_start(PVDCTest *t, const char *props);

/* Free what pvdc_test_attach() allocated; the machine keeps running. */
void pvdc_test_detach(PVDCTest *t);

/* Detach @t and quit its machine. */
void pvdc_test_stop(PVDCTest *t);

static inline int64_t pvdc_now_ns(PVDCTest *t)
{
    return t->now;
}

/* Move the qtest clock to @when, never backwards. */
void pvdc_step_to(PVDCTest *t, int64_t when);

/* Up to the next timer deadline of the machine. */
void pvdc_step_next(PVDCTest *t);

static inline uint64_t pvdc_period_ns(uint32_t clock_khz)
{
    return (uint64_t)MODE_HTOTAL * MODE_VTOTAL * SCALE_MS / clock_khz;
}

static inline unsigned int pvdc_plane_of(PVDCTest *t, unsigned int head,
                                         unsigned int index)
{
    return head * (t->overlays + 2) + index;
}

static inline unsigned int pvdc_cursor_of(PVDCTest *t, unsigned int head)
{
    return pvdc_plane_of(t, head, t->overlays + 1);
}

/* Registers @reg.. into @val, in one qtest round trip. */
void pvdc_rd_block(PVDCTest *t, uint64_t reg, uint32_t *val,
                   unsigned int count);


/* The active windows of every head and plane, into @snap. */
void pvdc_snapshot_active(PVDCTest *t, PVDCSnapshot *snap);

/* The shadow windows of every head and plane, into @snap. */
void pvdc_snapshot_shadow(PVDCTest *t, PVDCSnapshot *snap);

/* The active windows are exactly @expected. */
void pvdc_assert_active_is(PVDCTest *t, const PVDCSnapshot *expected);

static inline void pvdc_doorbell(PVDCTest *t, unsigned int head)
{
    pvdc_wr(t, PVDC_HEAD_CONTROL(head) + PVDC_HEAD_DOORBELL, 1);
}

/* The time of @head's last vblank (VBLANK_TIME), in ns. */
uint64_t pvdc_vblank_time(PVDCTest *t, unsigned int head);

/* To the next vblank of @head, an enabled head. */
void pvdc_step_to_next_vblank(PVDCTest *t, unsigned int head);

/*
 * The shadow state of a mode of @w x @h active pixels in an @htotal x
 * @vtotal frame at @clock_khz, enabled.
 */
void pvdc_write_mode_sized(PVDCTest *t, unsigned int head, uint32_t w,
                           uint32_t h, uint32_t htotal, uint32_t vtotal,
                           uint32_t clock_khz);

/* The shadow state of the 64x48 test mode at @clock_khz, enabled. */
void pvdc_write_mode(PVDCTest *t, unsigned int head, uint32_t clock_khz);

/* Framebuffer registers, and an unscaled full-fb source and destination. */
void pvdc_write_fb(PVDCTest *t, unsigned int plane, uint32_t format,
                   uint64_t offset, uint32_t pitch, uint32_t w, uint32_t h);

/*
 * The shadow state of an opaque, unscaled, full-screen XRGB8888 plane of
 * the test mode, enabled on @head.
 */
void pvdc_write_plane(PVDCTest *t, unsigned int plane, unsigned int head,
                      uint32_t offset, uint32_t zpos);

static inline uint32_t pvdc_result_of(uint32_t code, unsigned int plane)
{
    return code | plane << PVDC_RESULT_PLANE_SHIFT;
}

static inline uint32_t pvdc_head_result(uint32_t code)
{
    return pvdc_result_of(code, PVDC_RESULT_PLANE_NONE);
}

/* The outcome of the last doorbell on @head, within @limit ns. */
uint32_t pvdc_wait_outcome(PVDCTest *t, unsigned int head, int64_t limit);

/*
 * Ring @head's doorbell and return the outcome, at the latch point (the
 * next vblank; a frame of the new mode later for a head it enables; at
 * once for a head that is and stays disabled).
 */
uint32_t pvdc_commit(PVDCTest *t, unsigned int head);

/* The frame period of the mode in @head's shadow registers. */
int64_t pvdc_shadow_period_ns(PVDCTest *t, unsigned int head);

/*
 * Ring @head's doorbell for a commit that enables it, from a disabled
 * head and no link-up delay: it is armed, not applied, until the first
 * vblank of the new timeline, one frame of its mode later, where it
 * applies.  Returns that latch time, which is vblank 0 of the timeline.
 */
int64_t pvdc_commit_enable(PVDCTest *t, unsigned int head);

/*
 * Enable @head with the test mode and its primary plane at VRAM offset 0,
 * from a disabled head and no link-up delay (pvdc_commit_enable()).  Returns
 * the enable time, which is vblank 0 of the new timeline.
 */
int64_t pvdc_enable_head(PVDCTest *t, unsigned int head, uint32_t clock_khz);

/*
 * The shadow and active state of every head and plane, and the control
 * registers, as a reset leaves them: head h drives connector h with its
 * share of the bandwidth, every plane on its home head, opaque, disabled.
 */
void pvdc_assert_reset_state(PVDCTest *t);

/* Make @plane show a 16x16 corner only, to stay within the bandwidth. */
void pvdc_shrink_plane(PVDCTest *t, unsigned int plane);

/* The GSI on which the device's INTA# reaches the I/O APIC. */
int pvdc_find_intx_gsi(PVDCTest *t);

/*
 * The CRC of the current frame of @head and, in @frame, the vblank count
 * it belongs to: CRC_VALUE first, as the spec says to read them.
 */
uint32_t pvdc_read_crc(PVDCTest *t, unsigned int head, uint32_t *frame);

/* A read-only statistic of the device with id @id (qom-get). */
uint64_t pvdc_statistic_of(QTestState *qts, const char *id, const char *name);

/* A read-only statistic of the device under test (pvdc0). */
uint64_t pvdc_statistic(QTestState *qts, const char *name);

/* How often the device's timers have fired (x-timer-callbacks). */
uint64_t pvdc_timer_callbacks(PVDCTest *t);

/* Set property @prop of the device under test (qom-set). */
void pvdc_qom_set_uint(QTestState *qts, const char *prop, uint64_t value);
void pvdc_qom_set_bool(QTestState *qts, const char *prop, bool value);

/*
 * Console @head as a QMP screendump shows it, 0x00RRGGBB per pixel, of
 * @width x @height pixels (NULLs: only compose it, through the console).
 * QMP's "head" is the console index, which is the connector's: the
 * picture of the head that drives connector @head.
 */
uint32_t *pvdc_screendump(QTestState *qts, unsigned int head, int *width,
                          int *height);

/* Console @head as pvdc_screendump() shows it, of the test mode's size. */
uint32_t *pvdc_screendump_mode(QTestState *qts, unsigned int head);

/*
 * Pictures of the test mode (0x00RRGGBB) @got and @want differ by at most
 * @tolerance in each channel of each pixel; the first that does not is
 * named.
 */
void pvdc_assert_pictures_equal(const uint32_t *got, const uint32_t *want,
                                int tolerance);

/*
 * Wait until the migration of @qts (either side) ends; returns whether it
 * completed.  Migration runs on the host's clock, not the qtest one: poll
 * it, as the QEMU migration tests do.
 */
bool pvdc_migration_wait(QTestState *qts);

/* Migrate @from to @to (started with -incoming @uri); wait until @to runs. */
void pvdc_migrate(QTestState *from, QTestState *to, const char *uri);

/*
 * Migrate @src to a new machine, started with @props and @extra as
 * pvdc_test_spawn() takes them, through a UNIX socket; @dst gets it at the
 * same instant of the qtest clock (the clock is the test's: it is carried
 * over as a host would).
 */
void pvdc_test_migrate(PVDCTest *src, PVDCTest *dst, const char *props,
                       const char *extra);

/*
 * Write the BIND table of @n entries (@entries[2 * i]: address,
 * @entries[2 * i + 1]: length) into guest memory at @table, little-endian.
 */
void pvdc_write_bind_table(PVDCTest *t, uint64_t table, const uint64_t *entries,
                           size_t n);

/*
 * BIND [@addr, @addr + @size) of the device address space to the @n
 * entries of the table at @table; returns BIND_STATUS.
 */
uint32_t pvdc_bind_range(PVDCTest *t, uint32_t addr, uint32_t size,
                         uint64_t table, uint32_t n);

/* UNBIND [@addr, @addr + @size); returns BIND_STATUS. */
uint32_t pvdc_unbind_range(PVDCTest *t, uint32_t addr, uint32_t size);

/*
 * The frame CRC as docs/specs/pvdc.rst defines it: CRC-32 (IEEE 802.3, as
 * zlib's crc32()) over the pixels as little-endian 0x00RRGGBB words, the
 * X byte counting as zero.  Written bit by bit, independently of the
 * device's table-driven one.
 */
uint32_t pvdc_frame_crc(const uint32_t *pixels, size_t n);

/*
 * The "good" state hostile guests are tested from: head 0 on with the
 * test mode, its primary plane at PVDC_GOOD_OFFSET; a flip moves it to
 * PVDC_FLIP_OFFSET.
 */
#define PVDC_GOOD_OFFSET    0
#define PVDC_FLIP_OFFSET    (64 * KiB)

/* Head 0 on with the test mode and its primary plane at PVDC_GOOD_OFFSET. */
void pvdc_enable_good_head0(PVDCTest *t);

/* Compose @head once more through the console, as a screendump. */
void pvdc_compose_again(PVDCTest *t, unsigned int head);

/*
 * Fill @len bytes of VRAM at @offset with a pattern that @seed varies;
 * returns a copy (g_free() it).
 */
uint8_t *pvdc_fill_vram(PVDCTest *t, uint64_t offset, size_t len,
                        uint32_t seed);

/*
 * The device is still itself: identity reads back, the active state is
 * @before, and a primary flip on head 0 applies at the next vblank (and
 * is flipped back, so that @before still holds afterwards).
 */
void pvdc_assert_still_works(PVDCTest *t, const PVDCSnapshot *before);

/*
 * The pixel formats of the design: the RGB ones, which every plane
 * takes, first (PVDC_RGB_FORMATS of them), then the YCbCr ones, which
 * overlays take.
 */
#define PVDC_RGB_FORMATS    6
extern const uint32_t pvdc_formats[9];

#endif /* TESTS_QTEST_PVDC_QTEST_H */
