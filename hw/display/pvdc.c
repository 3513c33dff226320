/*
 * pvdc: paravirtual display controller with atomic commits.
 *
 * PCI device, QOM type, properties, reset and migration.  The register map
 * is include/hw/display/pvdc-regs.h, its behaviour docs/specs/pvdc.rst;
 * pvdc-internal.h says which file implements what.
 *
 * Copyright (c) 2026 The pvdc authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/error-report.h"
#include "qemu/module.h"
#include "qemu/units.h"
#include "qapi/error.h"
#include "hw/pci/msi.h"
#include "hw/pci/pci.h"
#include "hw/qdev-properties.h"
#include "migration/vmstate.h"
#include "pvdc-internal.h"

#define PVDC_MIN_VRAM_SIZE      (16 * MiB)
/*
 * Plane, writeback and colour table offsets are 32-bit registers: with at
 * most 2 GiB, an offset plus a size stays below 2^32 even in a guest's
 * 32-bit arithmetic.
 */
#define PVDC_MAX_VRAM_SIZE      (2 * GiB)

/*
 * What the bandwidth default promises every head: a full-screen primary
 * and a full-screen overlay at max-width x max-height, 32 bits a pixel,
 * and the largest cursor.
 */
#define PVDC_DEFAULT_FULL_PLANES        2
#define PVDC_DEFAULT_CPP                4

/*
 * VRAM holds what needs no DMA: the colour tables (the Linux driver keeps
 * about 64 KiB a head there) and the framebuffers of a guest that binds
 * no guest RAM (a 1920x1080 32-bit one, or two of 1280x1024, beside the
 * tables of eight heads).  Framebuffers in guest RAM need none of it,
 * and every byte of VRAM is device address space their bindings lose:
 * with 16 MiB, the 32 buffers of eight heads at 7680x4320 showing two
 * full-screen planes, with a flip armed on each, fit in the rest.  So
 * the default does not follow the modes.
 */
#define PVDC_DEFAULT_VRAM_SIZE          PVDC_MIN_VRAM_SIZE

static uint32_t pvdc_planes_per_head(PVDCState *s)
{
    return s->conf.num_overlays + 2;
}

uint32_t pvdc_plane_home(PVDCState *s, unsigned int plane)
{
    return plane / pvdc_planes_per_head(s);
}

uint32_t pvdc_plane_type(PVDCState *s, unsigned int plane)
{
    uint32_t index = plane % pvdc_planes_per_head(s);

    if (index == 0) {
        return PVDC_PLANE_TYPE_PRIMARY;
    }
    if (index == pvdc_planes_per_head(s) - 1) {
        return PVDC_PLANE_TYPE_CURSOR;
    }
    return PVDC_PLANE_TYPE_OVERLAY;
}

uint32_t pvdc_plane_caps(PVDCState *s, unsigned int plane)
{
    uint32_t type = pvdc_plane_type(s, plane);
    uint32_t home = pvdc_plane_home(s, plane);
    uint32_t heads = type == PVDC_PLANE_TYPE_OVERLAY ?
                     MAKE_64BIT_MASK(0, s->conf.num_heads) : BIT(home);

    uint32_t caps = FIELD_DP32(0, PLANE_CAPS, TYPE, type);

    caps = FIELD_DP32(caps, PLANE_CAPS, HEADS, heads);
    return FIELD_DP32(caps, PLANE_CAPS, HOME, home);
}

static bool pvdc_check_properties(PVDCState *s, Error **errp)
{
    if (s->conf.num_heads < 1 || s->conf.num_heads > PVDC_MAX_HEADS) {
        error_setg(errp, "pvdc: heads must be between 1 and %d",
                   PVDC_MAX_HEADS);
        return false;
    }
    if (s->conf.num_overlays > PVDC_MAX_OVERLAYS) {
        error_setg(errp, "pvdc: overlays must be at most %d",
                   PVDC_MAX_OVERLAYS);
        return false;
    }
    if (s->conf.num_scalers > PVDC_MAX_SCALERS) {
        error_setg(errp, "pvdc: scalers must be at most %d",
                   PVDC_MAX_SCALERS);
        return false;
    }
    /* 0: derived from the other properties at realize */
    if (s->vram_size &&
        (s->vram_size < PVDC_MIN_VRAM_SIZE ||
         s->vram_size > PVDC_MAX_VRAM_SIZE || !is_power_of_2(s->vram_size))) {
        error_setg(errp, "pvdc: vram-size must be 0 (the default) or a power "
                   "of two between %" PRIu64 " MiB and %" PRIu64 " MiB",
                   PVDC_MIN_VRAM_SIZE / MiB, PVDC_MAX_VRAM_SIZE / MiB);
        return false;
    }
    if (s->conf.max_width < 1 || s->conf.max_width > PVDC_MAX_SIZE_LIMIT ||
        s->conf.max_height < 1 || s->conf.max_height > PVDC_MAX_SIZE_LIMIT) {
        error_setg(errp, "pvdc: max-width and max-height must be between "
                   "1 and %d", PVDC_MAX_SIZE_LIMIT);
        return false;
    }
    /* pvdc series: outputs */
    if (s->xres > s->conf.max_width || s->yres > s->conf.max_height) {
        error_setg(errp, "pvdc: xres and yres must be at most max-width "
                   "and max-height");
        return false;
    }
    /* pvdc series: end outputs */
    if (s->link_up_delay_ms > PVDC_MAX_LINK_UP_DELAY_MS) {
        error_setg(errp, "pvdc: x-link-up-delay-ms must be at most %d",
                   PVDC_MAX_LINK_UP_DELAY_MS);
        return false;
    }
    return true;
}

/* KiB per frame a plane of @width x @height costs (pvdc_check_sums()). */
static uint64_t pvdc_plane_kib(uint32_t width, uint32_t height)
{
    return DIV_ROUND_UP((uint64_t)width * height * PVDC_DEFAULT_CPP, KiB);
}

/* pvdc series: memory */
/* Device address space one bound buffer of @width x @height takes. */
static uint64_t pvdc_buffer_bytes(uint32_t width, uint32_t height)
{
    uint64_t pitch = ROUND_UP((uint64_t)width * PVDC_DEFAULT_CPP,
                              PVDC_PITCH_ALIGNMENT);

    return ROUND_UP(pitch * height, PVDC_BIND_PAGE_SIZE);
}

/*
 * A vram-size the user set works whatever it is, but say so if it leaves
 * too little address space above VRAM for what the bandwidth default lets
 * every head show: two full-screen planes, with a flip of each armed.
 */
static void pvdc_check_bind_space(PVDCState *s)
{
    uint64_t need = (uint64_t)s->conf.num_heads * PVDC_DEFAULT_FULL_PLANES *
                    2 * pvdc_buffer_bytes(s->conf.max_width,
                                          s->conf.max_height);

    if (s->vram_size && need > s->conf.bind_space) {
        warn_report("pvdc: vram-size leaves %" PRIu64 " MiB of device "
                    "address space above VRAM; %u heads flipping two "
                    "full-screen %ux%u planes need %" PRIu64 " MiB",
                    s->conf.bind_space / MiB, s->conf.num_heads,
                    s->conf.max_width, s->conf.max_height,
                    DIV_ROUND_UP(need, MiB));
    }
}

/* pvdc series: end memory */
static uint32_t pvdc_default_bandwidth_total(PVDCState *s)
{
    uint64_t per_head =
        PVDC_DEFAULT_FULL_PLANES * pvdc_plane_kib(s->conf.max_width,
                                                  s->conf.max_height) +
        pvdc_plane_kib(PVDC_CURSOR_MAX_SIZE, PVDC_CURSOR_MAX_SIZE);

    /* at most 8 * (2 * 2^20 + 2^8) KiB: fits */
    return s->conf.num_heads * per_head;
}

static void pvdc_write_config(PCIDevice *pci, uint32_t addr, uint32_t val,
                              int len)
{
    PVDCState *s = PVDC(pci);
    uint32_t pending = s->int_status & s->int_enable;

    pci_default_write_config(pci, addr, val, len);
    /* Enabling or disabling MSI moves a pending interrupt to the other. */
    pvdc_irq_update(s, pending);
}

static void pvdc_realize(PCIDevice *pci, Error **errp)
{
    PVDCState *s = PVDC(pci);
    unsigned int h;
    Error *err = NULL;

    if (!pvdc_check_properties(s, errp)) {
        return;
    }
    /* pvdc series: boot */
    /* First: what fw_cfg adds stays, so a refusal has nothing to undo. */
    if (!pvdc_boot_realize(s, errp)) {
        return;
    }
    /* pvdc series: end boot */
    s->num_planes = s->conf.num_heads * pvdc_planes_per_head(s);
    /* pvdc series: outputs */
    if (!s->xres) {
        s->xres = MIN(PVDC_DEFAULT_XRES, s->conf.max_width);
    }
    if (!s->yres) {
        s->yres = MIN(PVDC_DEFAULT_YRES, s->conf.max_height);
    }
    /* pvdc series: end outputs */
    s->conf.bandwidth_total = s->bandwidth_kib ? s->bandwidth_kib :
                              pvdc_default_bandwidth_total(s);
    s->conf.vram_size = s->vram_size ? s->vram_size : PVDC_DEFAULT_VRAM_SIZE;
    /* pvdc series: memory */
    /* VRAM is at most 2 GiB: BIND_SPACE fits its 32 bits */
    s->conf.bind_space = PVDC_ADDR_SPACE_SIZE - s->conf.vram_size;
    if (s->bind_space) {
        if (s->bind_space > s->conf.bind_space ||
            s->bind_space % PVDC_BIND_PAGE_SIZE) {
            error_setg(errp, "pvdc: x-bind-space must be a multiple of "
                       "%d bytes, at most the %" PRIu64 " MiB above VRAM",
                       PVDC_BIND_PAGE_SIZE, s->conf.bind_space / MiB);
            return;
        }
        s->conf.bind_space = s->bind_space;
    } else {
        pvdc_check_bind_space(s);
    }
    /* pvdc series: end memory */

    pci_config_set_interrupt_pin(pci->config, 1);
    /* Without MSI on this machine the device still works with INTx. */
    if (msi_init(pci, 0, 1, true, false, &err) == -ENOTSUP) {
        error_free(err);
    } else if (err) {
        error_propagate(errp, err);
        return;
    }

    memory_region_init_io(&s->mmio, OBJECT(s), &pvdc_mmio_ops, s, "pvdc.mmio",
                          PVDC_MMIO_SIZE);
    pci_register_bar(pci, PVDC_MMIO_BAR, PCI_BASE_ADDRESS_SPACE_MEMORY,
                     &s->mmio);

    if (!memory_region_init_ram(&s->vram, OBJECT(s), "pvdc.vram",
                                s->conf.vram_size, errp)) {
        msi_uninit(pci);
        return;
    }
    /*
     * 64-bit: the firmware may place it above 4 GiB, where a vram-size
     * of up to 2 GiB fits whatever the 32-bit PCI hole leaves.
     */
    pci_register_bar(pci, PVDC_VRAM_BAR, PCI_BASE_ADDRESS_SPACE_MEMORY |
                     PCI_BASE_ADDRESS_MEM_TYPE_64 |
                     PCI_BASE_ADDRESS_MEM_PREFETCH, &s->vram);

    for (h = 0; h < s->conf.num_heads; h++) {
        s->heads[h].dev = s;
        s->heads[h].index = h;
    }
    /* pvdc series: outputs */
    if (!pvdc_output_realize(s, errp)) {
        msi_uninit(pci);
        return;
    }
    /* pvdc series: end outputs */

    s->timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, pvdc_timer_cb, s);
    /* pvdc series: console */
    pvdc_console_init(s);
    /* pvdc series: end console */
    /* pvdc series: memory */
    pvdc_memory_realize(s);
    /* pvdc series: end memory */
}

/*
 * What a vCPU or the device's own timer may still use after unrealize
 * (an access already dispatched, a hot-unplug triggered by the device's
 * own interrupt message) is freed in finalize; unrealize only stops it,
 * and pvdc_alive() turns every entry point away from then on.
 */
static void pvdc_exit(PCIDevice *pci)
{
    PVDCState *s = PVDC(pci);

    timer_del(s->timer);
    /* pvdc series: console */
    pvdc_console_unrealize(s);
    /* pvdc series: end console */
    /* pvdc series: memory */
    pvdc_memory_unrealize(s);
    /* The mappings hold references to the guest's RAM: drop them now. */
    pvdc_memory_reset(s);
    /* pvdc series: end memory */
    msi_uninit(pci);
}

static void pvdc_instance_finalize(Object *obj)
{
    PVDCState *s = PVDC(obj);
    /* pvdc series: color */
    unsigned int h;
    /* pvdc series: end color */

    timer_free(s->timer);
    /* pvdc series: console */
    pvdc_console_finalize(s);
    /* pvdc series: end console */
    /* pvdc series: color */
    for (h = 0; h < PVDC_MAX_HEADS; h++) {
        pvdc_color_clear(&s->heads[h].armed_color);
        pvdc_color_clear(&s->heads[h].active_color);
    }
    /* pvdc series: end color */
}

static void pvdc_reset_enter(Object *obj, ResetType type)
{
    PVDCState *s = PVDC(obj);
    unsigned int h, p;

    for (h = 0; h < s->conf.num_heads; h++) {
        PVDCHead *head = &s->heads[h];
        PVDCHeadRegs regs = {
            .regs[R_HS_BANDWIDTH] = s->conf.bandwidth_total / s->conf.num_heads,
            .regs[R_HS_CONNECTOR] = h,
        };

        head->shadow = head->armed = head->active = regs;
        /* pvdc series: color */
        pvdc_color_reset(head);
        /* pvdc series: end color */
        head->is_armed = false;
        head->group = 0;
        head->latch_ns = 0;
        memset(head->plane_armed, 0, sizeof(head->plane_armed));
        memset(head->armed_planes, 0, sizeof(head->armed_planes));
        head->armed_seq = head->done_seq = 0;
        head->result = PVDC_RESULT_NONE;
        head->done_frame = 0;
        head->status = 0;
        head->enable_ns = head->last_vblank_ns = 0;
        head->base_count = head->irq_vblank_count = 0;
        head->period_ns = 0;
        head->vblank_time_hi = 0;
        /* pvdc series: capture */
        head->crc_ctrl = 0;
        head->crc_value = head->crc_frame = 0;
        pvdc_crc_invalidate(head);
        /* pvdc series: end capture */
    }
    for (p = 0; p < s->num_planes; p++) {
        PVDCPlaneRegs regs = {
            .regs[R_PS_HEAD] = pvdc_plane_home(s, p),
            .regs[R_PS_ALPHA] = UINT16_MAX,
        };

        s->planes[p].shadow = s->planes[p].active = regs;
    }
    s->int_status = 0;
    s->int_enable = 0;
    /* pvdc series: memory */
    pvdc_memory_reset(s);
    /* pvdc series: end memory */
    /* pvdc series: boot */
    pvdc_boot_reset(s);
    /* pvdc series: end boot */
}

static void pvdc_reset_hold(Object *obj, ResetType type)
{
    PVDCState *s = PVDC(obj);

    timer_del(s->timer);
    pci_set_irq(PCI_DEVICE(s), 0);
    /* pvdc series: capture */
    pvdc_crc_budget_reset(s, qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL));
    /* pvdc series: end capture */
}

static bool pvdc_config_same(const char *prop, uint64_t src, uint64_t dst,
                             Error **errp)
{
    if (src != dst) {
        error_setg(errp, "pvdc: the migration source has %s=%" PRIu64
                   ", this device %s=%" PRIu64 "; start the destination with "
                   "the source's properties", prop, src, prop, dst);
        return false;
    }
    return true;
}

static bool pvdc_config_matches(PVDCState *s, Error **errp)
{
    const PVDCConfig *src = &s->migrated_conf;
    const PVDCConfig *dst = &s->conf;

    return pvdc_config_same("heads", src->num_heads, dst->num_heads, errp) &&
           pvdc_config_same("overlays", src->num_overlays, dst->num_overlays,
                            errp) &&
           pvdc_config_same("scalers", src->num_scalers, dst->num_scalers,
                            errp) &&
           pvdc_config_same("vram-size", src->vram_size, dst->vram_size,
                            errp) &&
           pvdc_config_same("max-width", src->max_width, dst->max_width,
                            errp) &&
           pvdc_config_same("max-height", src->max_height, dst->max_height,
                            errp) &&
           pvdc_config_same("bandwidth (KiB, all heads)",
                            src->bandwidth_total, dst->bandwidth_total, errp);
}

/* What a stream brings replaces the device's own state. */
static int pvdc_pre_load(void *opaque)
{
    PVDCState *s = opaque;
    /* pvdc series: color */
    unsigned int h;
    /* pvdc series: end color */

    s->subsections_loaded = 0;
    /* pvdc series: color */
    /* Its colour tables: none if it has no pvdc/colors subsection. */
    for (h = 0; h < PVDC_MAX_HEADS; h++) {
        pvdc_color_reset(&s->heads[h]);
    }
    /* pvdc series: end color */
    /* pvdc series: memory */
    /* So do its bindings: none if it has no pvdc/memory subsection. */
    pvdc_memory_reset(s);
    /* pvdc series: end memory */
    /* pvdc series: boot */
    /* And the boot display: over if it has no pvdc/boot subsection. */
    s->boot_display = false;
    /* pvdc series: end boot */
    return 0;
}

int pvdc_subsection_pre_load(PVDCState *s, PVDCSubsection which)
{
    if (s->subsections_loaded & BIT(which)) {
        error_report("pvdc: the stream repeats a subsection (%u)", which);
        return -EINVAL;
    }
    s->subsections_loaded |= BIT(which);
    return 0;
}

/* pvdc series: color */
static int pvdc_colors_pre_load(void *opaque)
{
    return pvdc_subsection_pre_load(opaque, PVDC_SUBSECTION_COLORS);
}

/* pvdc series: end color */
static int pvdc_pre_save(void *opaque)
{
    PVDCState *s = opaque;

    s->migrated_conf = s->conf;
    return 0;
}

/*
 * Registers the guest cannot set to these values, and the timeline the
 * vblank arithmetic relies on.
 */
static bool pvdc_loaded_registers_valid(PVDCState *s, Error **errp)
{
    uint32_t all_ints = MAKE_64BIT_MASK(0, s->conf.num_heads *
                                           PVDC_INT_BITS_PER_HEAD);
    unsigned int h;

    if ((s->int_status | s->int_enable) & ~all_ints) {
        error_setg(errp, "pvdc: interrupt bits 0x%x of heads that do not "
                   "exist", (s->int_status | s->int_enable) & ~all_ints);
        return false;
    }
    for (h = 0; h < s->conf.num_heads; h++) {
        PVDCHead *head = &s->heads[h];

        if (head->status & ~PVDC_HEAD_STATUS_DOORBELL_OVERRUN) {
            error_setg(errp, "pvdc: head %u: reserved bits in STATUS 0x%x",
                       h, head->status);
            return false;
        }
        /* pvdc series: capture */
        if (head->crc_ctrl & ~PVDC_CRC_CTRL_ENABLE) {
            error_setg(errp, "pvdc: head %u: reserved bits in CRC_CTRL 0x%x",
                       h, head->crc_ctrl);
            return false;
        }
        /* pvdc series: end capture */
        if (!pvdc_timeline_valid(head)) {
            error_setg(errp, "pvdc: head %u: vblank timeline out of range",
                       h);
            return false;
        }
    }
    return true;
}

/*
 * A migration stream is input too: the destination accepts nothing that
 * the source's guest could not have reached through the registers.
 */
static int pvdc_post_load(void *opaque, int version_id)
{
    PVDCState *s = opaque;
    Error *err = NULL;
    unsigned int h;

    if (!pvdc_config_matches(s, &err) ||
        !pvdc_loaded_registers_valid(s, &err) ||
        !pvdc_loaded_state_valid(s, &err)) {
        error_report_err(err);
        return -EINVAL;
    }
    /* pvdc series: color */
    for (h = 0; h < PVDC_MAX_HEADS; h++) {
        PVDCHead *head = &s->heads[h];

        /*
         * Heads that exist were checked against their registers
         * (pvdc_loaded_state_valid()); the others have no tables.
         */
        if (h >= s->conf.num_heads &&
            (head->armed_color.degamma_size || head->armed_color.gamma_size ||
             head->armed_color.has_ctm || head->active_color.degamma_size ||
             head->active_color.gamma_size || head->active_color.has_ctm)) {
            error_report("pvdc: colour tables for head %u, which does not "
                         "exist", h);
            return -EINVAL;
        }
        if (!pvdc_color_derive(&head->armed_color) ||
            !pvdc_color_derive(&head->active_color)) {
            error_report("pvdc: head %u: colour tables out of range", h);
            return -EINVAL;
        }
    }
    /* pvdc series: end color */
    for (h = 0; h < s->conf.num_heads; h++) {
        PVDCHead *head = &s->heads[h];

        head->period_ns = pvdc_head_on(head) ?
                          pvdc_mode_period_ns(&head->active) : 0;
        /* pvdc series: capture */
        pvdc_crc_invalidate(head);
        /* pvdc series: end capture */
    }
    s->timer_last_ns = 0;
    /* pvdc series: capture */
    pvdc_crc_budget_reset(s, qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL));
    /* pvdc series: end capture */
    pvdc_timer_update(s);
    return 0;
}

static const VMStateDescription vmstate_pvdc_config = {
    .name = "pvdc/config",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT32(num_heads, PVDCConfig),
        VMSTATE_UINT32(num_overlays, PVDCConfig),
        VMSTATE_UINT32(num_scalers, PVDCConfig),
        VMSTATE_UINT64(vram_size, PVDCConfig),
        VMSTATE_UINT32(max_width, PVDCConfig),
        VMSTATE_UINT32(max_height, PVDCConfig),
        VMSTATE_UINT32(bandwidth_total, PVDCConfig),
        VMSTATE_END_OF_LIST()
    },
};

static const VMStateDescription vmstate_pvdc_head_regs = {
    .name = "pvdc/head-regs",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT32_ARRAY(regs, PVDCHeadRegs, PVDC_HEAD_STATE_REGS),
        VMSTATE_END_OF_LIST()
    },
};

static const VMStateDescription vmstate_pvdc_plane_regs = {
    .name = "pvdc/plane-regs",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT32_ARRAY(regs, PVDCPlaneRegs, PVDC_PLANE_STATE_REGS),
        VMSTATE_END_OF_LIST()
    },
};

/* pvdc series: color */
/* Checked before the tables are allocated: a stream cannot ask for more. */
static bool pvdc_color_sizes_valid(void *opaque, int version_id)
{
    PVDCHeadColor *c = opaque;

    return c->degamma_size <= PVDC_LUT_MAX_SIZE &&
           c->gamma_size <= PVDC_LUT_MAX_SIZE;
}

static const VMStateDescription vmstate_pvdc_color = {
    .name = "pvdc/color",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT32(degamma_size, PVDCHeadColor),
        VMSTATE_UINT32(gamma_size, PVDCHeadColor),
        VMSTATE_BOOL(has_ctm, PVDCHeadColor),
        VMSTATE_UINT64_ARRAY(ctm, PVDCHeadColor, 9),
        VMSTATE_VALIDATE("LUT sizes at most PVDC_LUT_MAX_SIZE",
                         pvdc_color_sizes_valid),
        VMSTATE_VARRAY_UINT32_ALLOC(degamma, PVDCHeadColor, degamma_size, 0,
                                    vmstate_info_uint64, uint64_t),
        VMSTATE_VARRAY_UINT32_ALLOC(gamma, PVDCHeadColor, gamma_size, 0,
                                    vmstate_info_uint64, uint64_t),
        VMSTATE_END_OF_LIST()
    },
};

static const VMStateDescription vmstate_pvdc_head_color = {
    .name = "pvdc/head-color",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_STRUCT(armed_color, PVDCHead, 1, vmstate_pvdc_color,
                       PVDCHeadColor),
        VMSTATE_STRUCT(active_color, PVDCHead, 1, vmstate_pvdc_color,
                       PVDCHeadColor),
        VMSTATE_END_OF_LIST()
    },
};

static bool pvdc_color_needed(void *opaque)
{
    PVDCState *s = opaque;
    unsigned int h;

    for (h = 0; h < PVDC_MAX_HEADS; h++) {
        if (s->heads[h].armed_color.pipeline ||
            s->heads[h].active_color.pipeline) {
            return true;
        }
    }
    return false;
}

/*
 * The colour tables and matrices copied at the doorbells, of the armed
 * and the active states; without this subsection there are none.  What
 * they derive is rebuilt by pvdc_post_load().
 */
static const VMStateDescription vmstate_pvdc_colors = {
    .name = "pvdc/colors",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = pvdc_color_needed,
    .pre_load = pvdc_colors_pre_load,
    .fields = (const VMStateField[]) {
        VMSTATE_STRUCT_ARRAY(heads, PVDCState, PVDC_MAX_HEADS, 1,
                             vmstate_pvdc_head_color, PVDCHead),
        VMSTATE_END_OF_LIST()
    },
};

/* pvdc series: end color */
static const VMStateDescription vmstate_pvdc_plane = {
    .name = "pvdc/plane",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_STRUCT(shadow, PVDCPlane, 1, vmstate_pvdc_plane_regs,
                       PVDCPlaneRegs),
        VMSTATE_STRUCT(active, PVDCPlane, 1, vmstate_pvdc_plane_regs,
                       PVDCPlaneRegs),
        VMSTATE_END_OF_LIST()
    },
};

static const VMStateDescription vmstate_pvdc_head = {
    .name = "pvdc/head",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_STRUCT(shadow, PVDCHead, 1, vmstate_pvdc_head_regs,
                       PVDCHeadRegs),
        VMSTATE_STRUCT(armed, PVDCHead, 1, vmstate_pvdc_head_regs,
                       PVDCHeadRegs),
        VMSTATE_STRUCT(active, PVDCHead, 1, vmstate_pvdc_head_regs,
                       PVDCHeadRegs),
        VMSTATE_BOOL(is_armed, PVDCHead),
        VMSTATE_UINT32(group, PVDCHead),
        VMSTATE_INT64(latch_ns, PVDCHead),
        VMSTATE_BOOL_ARRAY(plane_armed, PVDCHead, PVDC_MAX_PLANES),
        VMSTATE_STRUCT_ARRAY(armed_planes, PVDCHead, PVDC_MAX_PLANES, 1,
                             vmstate_pvdc_plane_regs, PVDCPlaneRegs),
        VMSTATE_UINT32(armed_seq, PVDCHead),
        VMSTATE_UINT32(done_seq, PVDCHead),
        VMSTATE_UINT32(result, PVDCHead),
        VMSTATE_UINT32(done_frame, PVDCHead),
        VMSTATE_UINT32(status, PVDCHead),
        /* pvdc series: capture */
        VMSTATE_UINT32(crc_ctrl, PVDCHead),
        /* pvdc series: end capture */
        VMSTATE_INT64(enable_ns, PVDCHead),
        VMSTATE_INT64(last_vblank_ns, PVDCHead),
        VMSTATE_UINT64(base_count, PVDCHead),
        VMSTATE_UINT64(irq_vblank_count, PVDCHead),
        VMSTATE_UINT32(vblank_time_hi, PVDCHead),
        VMSTATE_END_OF_LIST()
    },
};

static const VMStateDescription vmstate_pvdc = {
    .name = "pvdc",
    .version_id = 1,
    .minimum_version_id = 1,
    .pre_load = pvdc_pre_load,
    .pre_save = pvdc_pre_save,
    .post_load = pvdc_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_PCI_DEVICE(parent_obj, PVDCState),
        VMSTATE_STRUCT(migrated_conf, PVDCState, 1, vmstate_pvdc_config,
                       PVDCConfig),
        VMSTATE_UINT32(int_status, PVDCState),
        VMSTATE_UINT32(int_enable, PVDCState),
        VMSTATE_STRUCT_ARRAY(heads, PVDCState, PVDC_MAX_HEADS, 1,
                             vmstate_pvdc_head, PVDCHead),
        VMSTATE_STRUCT_ARRAY(planes, PVDCState, PVDC_MAX_PLANES, 1,
                             vmstate_pvdc_plane, PVDCPlane),
        VMSTATE_END_OF_LIST()
    },
    .subsections = (const VMStateDescription * const []) {
        /* pvdc series: outputs */
        &vmstate_pvdc_output,
        /* pvdc series: end outputs */
        /* pvdc series: color */
        &vmstate_pvdc_colors,
        /* pvdc series: end color */
        /* pvdc series: memory */
        &vmstate_pvdc_memory,
        /* pvdc series: end memory */
        /* pvdc series: boot */
        &vmstate_pvdc_boot,
        /* pvdc series: end boot */
        NULL
    },
};

static const Property pvdc_properties[] = {
    DEFINE_PROP_UINT32("heads", PVDCState, conf.num_heads, 2),
    DEFINE_PROP_UINT32("overlays", PVDCState, conf.num_overlays, 3),
    DEFINE_PROP_UINT32("scalers", PVDCState, conf.num_scalers, 2),
    /* 0: PVDC_DEFAULT_VRAM_SIZE */
    DEFINE_PROP_SIZE("vram-size", PVDCState, vram_size, 0),
    /* 4096x2160: the largest mode the EDID lists is then the maximum */
    DEFINE_PROP_UINT32("max-width", PVDCState, conf.max_width, 4096),
    DEFINE_PROP_UINT32("max-height", PVDCState, conf.max_height, 2160),
    /* 0: pvdc_default_bandwidth_total() */
    DEFINE_PROP_UINT32("bandwidth-kib", PVDCState, bandwidth_kib, 0),
    DEFINE_PROP_UINT32("x-link-up-delay-ms", PVDCState, link_up_delay_ms, 0),
    /* pvdc series: memory */
    /* 0: all of the device address space above VRAM */
    DEFINE_PROP_SIZE("x-bind-space", PVDCState, bind_space, 0),
    /* pvdc series: end memory */
    /* pvdc series: outputs */
    /* 0: PVDC_DEFAULT_XRES x PVDC_DEFAULT_YRES, within the maximum */
    DEFINE_PROP_UINT32("xres", PVDCState, xres, 0),
    DEFINE_PROP_UINT32("yres", PVDCState, yres, 0),
    /* pvdc series: end outputs */
    /* pvdc series: console */
    DEFINE_PROP_BOOL("host-cursor", PVDCState, host_cursor, false),
    /* pvdc series: end console */
    /* pvdc series: boot */
    /* auto: the first pvdc of a machine with fw_cfg DMA has it */
    DEFINE_PROP_ON_OFF_AUTO("ramfb", PVDCState, ramfb, ON_OFF_AUTO_AUTO),
    /* pvdc series: end boot */
};

static bool pvdc_get_stall(Object *obj, Error **errp)
{
    return PVDC(obj)->stalled;
}

static void pvdc_set_stall(Object *obj, bool value, Error **errp)
{
    PVDCState *s = PVDC(obj);

    s->stalled = value;
    /*
     * The timer catches up with the latch points passed while stalled, as
     * with any it runs late for, and its callback guards the interrupt.
     */
    if (pvdc_alive(s)) {
        timer_mod(s->timer, qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL));
    }
}

static void pvdc_instance_init(Object *obj)
{
    PVDCState *s = PVDC(obj);

    object_property_add_bool(obj, "x-stall", pvdc_get_stall, pvdc_set_stall);
    object_property_set_description(obj, "x-stall",
                                    "while true, armed commits never reach "
                                    "their latch point (test knob, "
                                    "settable at run time)");

    object_property_add_uint64_ptr(obj, "x-timer-callbacks",
                                   &s->timer_callbacks, OBJ_PROP_FLAG_READ);
    object_property_set_description(obj, "x-timer-callbacks",
                                    "times the device timer has run "
                                    "(statistic)");
    object_property_add_uint64_ptr(obj, "x-mmio-writes", &s->mmio_writes,
                                   OBJ_PROP_FLAG_READ);
    object_property_set_description(obj, "x-mmio-writes",
                                    "register writes the guest has made, "
                                    "ignored ones included (statistic)");
    /* pvdc series: memory */
    object_property_add_uint32_ptr(obj, "x-bindings", &s->num_bindings,
                                   OBJ_PROP_FLAG_READ);
    object_property_set_description(obj, "x-bindings",
                                    "ranges of guest pages bound into the "
                                    "device address space");
    object_property_add_uint64_ptr(obj, "x-bounce-bytes", &s->bounce_bytes,
                                   OBJ_PROP_FLAG_READ);
    object_property_set_description(obj, "x-bounce-bytes",
                                    "bytes copied out of guest pages to "
                                    "compose planes that are not "
                                    "contiguous in the host (statistic)");
    /* pvdc series: end memory */
    object_property_add_uint64_ptr(obj, "x-commits-applied",
                                   &s->commits_applied, OBJ_PROP_FLAG_READ);
    object_property_set_description(obj, "x-commits-applied",
                                    "head commits that became active "
                                    "(statistic)");
    object_property_add_uint64_ptr(obj, "x-commits-rejected",
                                   &s->commits_rejected, OBJ_PROP_FLAG_READ);
    object_property_set_description(obj, "x-commits-rejected",
                                    "head commits refused at their latch "
                                    "point, group members included "
                                    "(statistic)");
    /* pvdc series: console */
    pvdc_console_instance_init(s);
    /* pvdc series: end console */
    /* pvdc series: outputs */
    pvdc_output_instance_init(s);
    /* pvdc series: end outputs */
}

static void pvdc_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);
    PCIDeviceClass *k = PCI_DEVICE_CLASS(klass);
    ResettableClass *rc = RESETTABLE_CLASS(klass);

    k->vendor_id = PVDC_PCI_VENDOR_ID;
    k->device_id = PVDC_PCI_DEVICE_ID;
    k->revision = PVDC_PCI_REVISION;
    k->class_id = PCI_CLASS_DISPLAY_OTHER;
    k->realize = pvdc_realize;
    k->exit = pvdc_exit;
    k->config_write = pvdc_write_config;

    rc->phases.enter = pvdc_reset_enter;
    rc->phases.hold = pvdc_reset_hold;

    dc->desc = "Paravirtual display controller with atomic commits";
    dc->vmsd = &vmstate_pvdc;
    device_class_set_props(dc, pvdc_properties);
    object_class_property_set_description(klass, "heads",
        "number of heads (display outputs), 1 to 8");
    object_class_property_set_description(klass, "overlays",
        "overlay planes per head, 0 to 8");
    object_class_property_set_description(klass, "scalers",
        "scaled planes the device can show at once, all heads, 0 to 16");
    object_class_property_set_description(klass, "vram-size",
        "video memory (BAR 2), a power of two from 16 MiB to 2 GiB "
        "(0: the smallest; framebuffers in guest RAM need none)");
    object_class_property_set_description(klass, "max-width",
        "largest mode and framebuffer width, pixels, 1 to 16384");
    object_class_property_set_description(klass, "max-height",
        "largest mode and framebuffer height, pixels, 1 to 16384");
    object_class_property_set_description(klass, "bandwidth-kib",
        "memory bandwidth of all heads, KiB per frame "
        "(0: two full-screen XRGB8888 planes and a cursor per head)");
    object_class_property_set_description(klass, "x-link-up-delay-ms",
        "time the link of a disabled head takes to come up, ms, up to "
        stringify(PVDC_MAX_LINK_UP_DELAY_MS)
        " (an enable takes a frame of its mode at least)");
    /* pvdc series: memory */
    object_class_property_set_description(klass, "x-bind-space",
        "device address space above VRAM that bindings may use, bytes, a "
        "multiple of " stringify(PVDC_BIND_PAGE_SIZE) " (0: all of it)");
    /* pvdc series: end memory */
    /* pvdc series: outputs */
    object_class_property_set_description(klass, "xres",
        "preferred width of every head's connector (0: 1024)");
    object_class_property_set_description(klass, "yres",
        "preferred height of every head's connector (0: 768)");
    /* pvdc series: end outputs */
    /* pvdc series: console */
    object_class_property_set_description(klass, "host-cursor",
        "let the UI draw the cursor planes instead of composing them");
    /* pvdc series: end console */
    /* pvdc series: boot */
    object_class_property_set_description(klass, "ramfb",
        "boot display on head 0 until a head is enabled: a ramfb the "
        "firmware draws into (auto: if the machine can add one)");
    /* pvdc series: end boot */
    set_bit(DEVICE_CATEGORY_DISPLAY, dc->categories);
}

static const TypeInfo pvdc_types[] = {
    {
        .name = TYPE_PVDC,
        .parent = TYPE_PCI_DEVICE,
        .instance_size = sizeof(PVDCState),
        .instance_init = pvdc_instance_init,
        .instance_finalize = pvdc_instance_finalize,
        .class_init = pvdc_class_init,
        .interfaces = (InterfaceInfo[]) {
            { INTERFACE_CONVENTIONAL_PCI_DEVICE },
            { }
        },
    },
};

DEFINE_TYPES(pvdc_types)
