/*
 * pvdc: paravirtual display controller with atomic commits.
 *
 * Device state.  The register map is include/hw/display/pvdc-regs.h and the
 * behaviour behind it docs/specs/pvdc.rst.
 *
 * Copyright (c) 2026 The pvdc authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef HW_DISPLAY_PVDC_H
#define HW_DISPLAY_PVDC_H

#include "hw/pci/pci_device.h"
/* pvdc series: boot */
#include "hw/display/ramfb.h"
/* pvdc series: end boot */
#include "qapi/qapi-types-common.h"
#include "qemu/timer.h"
#include "ui/console.h"
#include "hw/display/pvdc-regs.h"
#include "qom/object.h"

#define TYPE_PVDC "pvdc"
OBJECT_DECLARE_SIMPLE_TYPE(PVDCState, PVDC)

/*
 * The latched state of a head: the registers of the head shadow and head
 * active windows (PVDC_HS_*) as the guest wrote them, indexed by R_HS_*
 * (pvdc-fields.h).
 */
typedef struct PVDCHeadRegs {
    uint32_t regs[PVDC_HEAD_STATE_REGS];
} PVDCHeadRegs;

/* pvdc series: color */
/*
 * The colour pipeline of an armed or active head state: the tables and
 * the matrix as copied from VRAM when the commit was armed (each struct
 * drm_color_lut entry and each coefficient as the little-endian 64-bit
 * value it is in VRAM), and what pvdc_compose_color_new() derived from
 * them.  A stage is copied only if the head is enabled, its HS_CTRL bit
 * set and its registers valid; empty otherwise.
 */
typedef struct PVDCHeadColor {
    uint32_t degamma_size;      /* entries in @degamma, 0: no stage */
    uint32_t gamma_size;        /* entries in @gamma, 0: no stage */
    bool has_ctm;
    uint64_t *degamma;
    uint64_t *gamma;
    uint64_t ctm[9];
    /* derived, not migrated; NULL when no stage is copied */
    struct PVDCComposeColor *pipeline;
    /*
     * The armed state shares @pipeline with the active state, which owns
     * it (the tables are the same): a page flip derives nothing.
     */
    bool shared;
} PVDCHeadColor;

/* pvdc series: end color */
/*
 * The latched state of a plane: the registers of the plane shadow and
 * plane active windows (PVDC_PS_*) as the guest wrote them, indexed by
 * R_PS_* (pvdc-fields.h).
 */
typedef struct PVDCPlaneRegs {
    uint32_t regs[PVDC_PLANE_STATE_REGS];
} PVDCPlaneRegs;

typedef struct PVDCPlane {
    PVDCPlaneRegs shadow;
    /*
     * What scans out.  Only ever a state that passed validation as part of
     * a commit, so composition can use it without re-checking the rules.
     */
    PVDCPlaneRegs active;
} PVDCPlane;

typedef struct PVDCHead {
    PVDCState *dev;
    unsigned int index;
    /* pvdc series: capture */
    /*
     * The frames composed for CRC capture and writeback, private to
     * pvdc-capture.c; not migrated.  Lives from realize to finalize.
     */
    struct PVDCCapture *capture;
    /* pvdc series: end capture */
    /* pvdc series: console */
    /* pictures of the head composed, for consoles, CRCs and writeback */
    uint64_t compositions;
    /* pvdc series: end console */

    PVDCHeadRegs shadow;
    PVDCHeadRegs armed;
    /* See PVDCPlane.active: validated, safe for composition. */
    PVDCHeadRegs active;
    /* pvdc series: color */
    /*
     * The colour pipeline of @armed (copied at the doorbell) and of
     * @active (moved from @armed at the latch point).  The scenes of the
     * console and of CRC capture only point to @active_color.pipeline,
     * each for the length of one composition in the thread that holds
     * the BQL.
     */
    PVDCHeadColor armed_color;
    PVDCHeadColor active_color;
    /* pvdc series: end color */

    /* The commit waiting for its latch point, if @is_armed. */
    bool is_armed;
    uint32_t group;             /* mask of the heads latched with this one */
    int64_t latch_ns;           /* QEMU_CLOCK_VIRTUAL */
    bool plane_armed[PVDC_MAX_PLANES];
    PVDCPlaneRegs armed_planes[PVDC_MAX_PLANES];

    /* Commit bookkeeping (head control window). */
    uint32_t armed_seq;
    uint32_t done_seq;
    uint32_t result;
    uint32_t done_frame;        /* PVDC_HEAD_DONE_FRAME: low half of a count */
    uint32_t status;
    /* pvdc series: capture */
    uint32_t crc_ctrl;
    uint32_t crc_value;         /* of the frame that started at crc_frame */
    uint32_t crc_frame;         /* PVDC_HEAD_CRC_FRAME: low half of a count */
    /* pvdc series: end capture */
    /* pvdc series: outputs */

    /*
     * Connector @index (pvdc-output.c), whatever head drives it, set by
     * the host: preferred mode and suggested position, given by
     * properties or by the UI of the console of that connector.
     */
    uint32_t pref_width;
    uint32_t pref_height;
    uint32_t pos_x;
    uint32_t pos_y;
    bool pos_set;               /* else placed right of the heads before */
    /* pvdc series: end outputs */

    /*
     * Vblank timeline: while the head is active-enabled, vblank n >= 1 is
     * at enable_ns + n * period_ns and the count is base_count + n.
     * While disabled the count and timestamp stay at base_count and
     * last_vblank_ns.  Counts are 64-bit: PVDC_HEAD_VBLANK_COUNT shows the
     * low half, but deadlines are computed from the whole count, which
     * does not wrap in the life of any machine (2^64 frames of 100 us).
     */
    int64_t enable_ns;
    int64_t last_vblank_ns;
    uint64_t base_count;
    uint64_t period_ns;         /* derived from @active, not migrated */
    /* Vblank count already reported through PVDC_INT_VBLANK. */
    uint64_t irq_vblank_count;
    /* High half of VBLANK_TIME as of the last read of the low half. */
    uint32_t vblank_time_hi;
} PVDCHead;

/* pvdc series: console */
/*
 * Connector @index and the QEMU console that shows it: the picture of the
 * head whose active state is enabled with HS_CONNECTOR = @index, if any
 * (pvdc-console.c).  The monitor on it is described in heads[@index]
 * (pvdc-output.c).
 */
typedef struct PVDCConnector {
    PVDCState *dev;
    unsigned int index;
    QemuConsole *con;
    /*
     * What the console shows, private to pvdc-console.c; not migrated.
     * Lives from realize to finalize.
     */
    struct PVDCDisplay *display;
} PVDCConnector;

/* pvdc series: end console */
/* pvdc series: memory */
/* One entry of a BIND table, as the guest wrote it. */
typedef struct PVDCBindEntry {
    uint64_t addr;              /* DMA address */
    uint64_t len;
} PVDCBindEntry;

/*
 * Guest pages bound at [@addr, @addr + @size) of the device address space
 * (pvdc-memory.c): the entries copied from the table at BIND, and the
 * host mappings of their pages, kept until UNBIND or reset.
 */
typedef struct PVDCBinding {
    uint32_t addr;
    uint32_t size;
    /* int32_t for VMSTATE_STRUCT_VARRAY_ALLOC; 1..PVDC_MAX_BIND_ENTRIES */
    int32_t num_entries;
    PVDCBindEntry *entries;
    /* derived from @entries, not migrated: NULL while not mapped */
    GArray *maps;               /* of PVDCBindMap, pvdc-memory.c */
    GArray *runs;               /* @maps merged where host-contiguous */
    /* all of its pages at consecutive host addresses, or NULL */
    uint8_t *view;
    /*
     * Its RAM went away under it (unplugged): @maps still hold the host
     * memory, which the device no longer reads or writes.  Not migrated.
     */
    bool lost;
} PVDCBinding;

/* pvdc series: end memory */
/*
 * What the guest reads of the device's configuration in the capability
 * registers: the properties (and the VRAM size and bandwidth total derived
 * from them at realize when left at 0).  The migration stream carries it,
 * and a destination configured differently refuses the stream.
 */
typedef struct PVDCConfig {
    uint32_t num_heads;
    uint32_t num_overlays;
    uint32_t num_scalers;
    uint64_t vram_size;
    uint32_t max_width;
    uint32_t max_height;
    uint32_t bandwidth_total;
    /* pvdc series: memory */
    /*
     * Bytes above VRAM that bindings may use (BIND_SPACE): a test's knob,
     * not migrated; a stream's bindings past it are refused by post_load.
     */
    uint64_t bind_space;
    /* pvdc series: end memory */
} PVDCConfig;

struct PVDCState {
    PCIDevice parent_obj;

    MemoryRegion mmio;
    MemoryRegion vram;
    /* Armed in realize, stopped in unrealize, freed in finalize. */
    QEMUTimer *timer;
    /* QEMU_CLOCK_VIRTUAL of the last run of @timer; not migrated */
    int64_t timer_last_ns;
    /* pvdc series: console */
    /*
     * Pushes the frames latches change to the UIs (pvdc-console.c).
     * Created in realize, cancelled in unrealize, freed in finalize.
     */
    QEMUBH *push_bh;
    /* pvdc series: end console */

    /* properties */
    PVDCConfig conf;
    uint64_t vram_size;         /* 0: the default */
    uint32_t bandwidth_kib;     /* 0: conf.bandwidth_total derived */
    uint32_t link_up_delay_ms;
    /* pvdc series: memory */
    uint64_t bind_space;        /* 0: conf.bind_space derived */
    /* pvdc series: end memory */
    /* pvdc series: outputs */
    uint32_t xres;
    uint32_t yres;
    /* pvdc series: end outputs */
    /* pvdc series: console */
    bool host_cursor;
    /* pvdc series: end console */
    /* pvdc series: boot */
    OnOffAuto ramfb;
    /* pvdc series: end boot */
    /* x-stall, a test knob settable at run time; not migrated */
    bool stalled;
    /* pvdc series: console */
    /* x-push-stall, a test knob settable at run time; not migrated */
    bool push_stalled;
    /* pvdc series: end console */

    /* derived at realize */
    uint32_t num_planes;

    /* the source's conf, filled by the load of a migration stream */
    PVDCConfig migrated_conf;
    /*
     * The subsections of vmstate_pvdc the stream being loaded brought so
     * far (bits of PVDCSubsection); not migrated.
     */
    uint32_t subsections_loaded;

    uint32_t int_status;
    uint32_t int_enable;
    /* pvdc series: capture */

    /*
     * Composition budget of CRC capture and writeback, in pixels, refilled
     * with QEMU_CLOCK_VIRTUAL up to PVDC_CRC_PIXELS_PER_SECOND / 8; not
     * migrated.
     */
    int64_t crc_budget;
    int64_t crc_budget_ns;
    /* pvdc series: end capture */

    /* statistics, read-only QOM properties */
    uint64_t timer_callbacks;
    /* pvdc series: console */
    uint64_t compositions;
    uint64_t damage_pages;
    /* pvdc series: end console */
    uint64_t mmio_writes;
    /* head commits at their latch point, by outcome */
    uint64_t commits_applied;
    uint64_t commits_rejected;
    /* pvdc series: memory */

    /* Guest memory (pvdc-memory.c): the BIND_* registers */
    uint32_t bind_addr;
    uint32_t bind_size;
    uint32_t bind_table_lo;
    uint32_t bind_table_hi;
    uint32_t bind_entries;
    uint32_t bind_status;
    /* the bindings, in address order, and their entries together */
    uint32_t num_bindings;
    uint32_t bound_entries;     /* derived, not migrated */
    uint32_t damage_addr;       /* DAMAGE_ADDR */
    /* host mappings the bindings' host views take; derived, not migrated */
    uint32_t view_mappings;
    /* bytes copied out of bindings to compose planes (statistic) */
    uint64_t bounce_bytes;
    /* the guest was told planes in bindings are not shown; not migrated */
    bool bus_master_off_logged;
    /* bus mastering as the consoles last showed planes in bindings */
    bool bus_master_shown;
    PVDCBinding bindings[PVDC_MAX_BINDINGS];
    /* RAM leaving the guest's memory map; a transaction removed some */
    MemoryListener ram_listener;
    bool ram_removed;
    /* pvdc series: end memory */
    /* pvdc series: boot */

    /*
     * The boot display (pvdc-boot.c): the ramfb companion, NULL without
     * one, and whether head 0's console shows it (from reset to the first
     * head enabled).
     */
    RAMFBState *boot_ramfb;
    bool boot_display;
    /* pvdc series: end boot */

    PVDCHead heads[PVDC_MAX_HEADS];
    /* pvdc series: console */
    /* As many as heads (PVDC_REG_NUM_CONNECTORS). */
    PVDCConnector connectors[PVDC_MAX_HEADS];
    /* pvdc series: end console */
    PVDCPlane planes[PVDC_MAX_PLANES];
    /* pvdc series: outputs */
    uint8_t edid[PVDC_MAX_HEADS][PVDC_EDID_SIZE];
    /* pvdc series: end outputs */
};

#endif /* HW_DISPLAY_PVDC_H */
