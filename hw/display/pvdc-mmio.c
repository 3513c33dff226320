/*
 * pvdc: paravirtual display controller - the register file (BAR0).
 *
 * Decodes an offset into its window and dispatches.  Nothing here acts on
 * a latched value: shadow registers are stored as written and checked only
 * when a commit latches (pvdc-latch.c).  Every access first brings the
 * device up to the current time (pvdc_catch_up()).
 *
 * Registers are 32 bits wide.  An 8-byte access is split by the memory
 * core into two 4-byte ones, lower address first, whatever the
 * accelerator (KVM splits it before QEMU sees it, TCG does not): the
 * spec promises that behaviour, not one that depends on the host.
 *
 * Copyright (c) 2026 The pvdc authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "hw/pci/msi.h"
#include "pvdc-compose.h"
#include "pvdc-internal.h"
#include "trace.h"

#define PVDC_GLOBAL_END         PVDC_REG_PLANE_CAPS(0)
#define PVDC_PLANE_CAPS_END     PVDC_HEAD_CONTROL_BASE

/*
 * The register at @offset of a state window of @count registers, or NULL
 * past its last one (the memory core hands over aligned accesses only).
 */
static uint32_t *pvdc_state_reg(uint32_t *regs, unsigned int count,
                                hwaddr offset)
{
    hwaddr index = offset / sizeof(uint32_t);

    return index < count ? &regs[index] : NULL;
}

static uint32_t *pvdc_head_reg(PVDCHeadRegs *r, hwaddr offset)
{
    return pvdc_state_reg(r->regs, ARRAY_SIZE(r->regs), offset);
}

static uint32_t *pvdc_plane_reg(PVDCPlaneRegs *r, hwaddr offset)
{
    return pvdc_state_reg(r->regs, ARRAY_SIZE(r->regs), offset);
}

/*
 * Locate @addr in a window of @count blocks of @stride bytes at @base.
 * Returns false if it is past the last block that exists.
 */
static bool pvdc_window(hwaddr addr, hwaddr base, hwaddr stride,
                        unsigned int count, unsigned int *index,
                        hwaddr *offset)
{
    if (addr < base || addr >= base + (hwaddr)count * stride) {
        return false;
    }
    *index = (addr - base) / stride;
    *offset = (addr - base) % stride;
    return true;
}

static uint32_t pvdc_features(PVDCState *s)
{
    uint32_t features = 0;

    if (msi_present(PCI_DEVICE(s))) {
        features |= PVDC_FEATURE_MSI;
    }
    /* pvdc series: boot */
    if (s->boot_ramfb) {
        features |= PVDC_FEATURE_BOOT_DISPLAY;
    }
    /* pvdc series: end boot */
    return features;
}

static bool pvdc_global_read(PVDCState *s, hwaddr addr, uint32_t *val)
{
    switch (addr) {
    case PVDC_REG_ID:
        *val = PVDC_ID;
        return true;
    case PVDC_REG_VERSION:
        *val = FIELD_DP32(0, VERSION, MINOR, PVDC_VERSION_MINOR);
        *val = FIELD_DP32(*val, VERSION, MAJOR, PVDC_VERSION_MAJOR);
        return true;
    case PVDC_REG_FEATURES:
        *val = pvdc_features(s);
        return true;
    case PVDC_REG_NUM_HEADS:
    case PVDC_REG_NUM_CONNECTORS:   /* one connector per head */
        *val = s->conf.num_heads;
        return true;
    case PVDC_REG_NUM_OVERLAYS:
        *val = s->conf.num_overlays;
        return true;
    case PVDC_REG_NUM_PLANES:
        *val = s->num_planes;
        return true;
    case PVDC_REG_NUM_SCALERS:
        *val = s->conf.num_scalers;
        return true;
    case PVDC_REG_VRAM_SIZE_LO:
        *val = extract64(s->conf.vram_size, 0, 32);
        return true;
    case PVDC_REG_VRAM_SIZE_HI:
        *val = extract64(s->conf.vram_size, 32, 32);
        return true;
    case PVDC_REG_MAX_SIZE:
        *val = PVDC_XY(s->conf.max_width, s->conf.max_height);
        return true;
    case PVDC_REG_CURSOR_MAX:
        *val = PVDC_XY(PVDC_CURSOR_MAX_SIZE, PVDC_CURSOR_MAX_SIZE);
        return true;
    case PVDC_REG_SCALE_LIMITS:
        *val = FIELD_DP32(0, SCALE_LIMITS, MAX_DOWNSCALE, PVDC_MAX_DOWNSCALE);
        /* 0: no limit */
        *val = FIELD_DP32(*val, SCALE_LIMITS, MAX_UPSCALE, 0);
        return true;
    case PVDC_REG_PITCH_ALIGN:
        *val = PVDC_PITCH_ALIGNMENT;
        return true;
    case PVDC_REG_OFFSET_ALIGN:
        *val = PVDC_OFFSET_ALIGNMENT;
        return true;
    case PVDC_REG_BANDWIDTH_TOTAL:
        *val = s->conf.bandwidth_total;
        return true;
    /* pvdc series: color */
    case PVDC_REG_LUT_SIZE:
        *val = PVDC_XY(PVDC_LUT_MAX_SIZE, PVDC_LUT_MAX_SIZE);
        return true;
    /* pvdc series: end color */
    case PVDC_REG_INT_STATUS:
        *val = s->int_status;
        return true;
    case PVDC_REG_INT_ENABLE:
        *val = s->int_enable;
        return true;
    case PVDC_REG_INT_ACK: {
        uint32_t was_pending = s->int_status & s->int_enable;

        *val = s->int_status;
        s->int_status = 0;
        pvdc_irq_update(s, was_pending);
        /* Vblanks interrupt again. */
        pvdc_timer_update(s);
        return true;
    }
    case PVDC_REG_MULTI_DOORBELL:
        *val = pvdc_armed_mask(s);
        return true;
    case PVDC_REG_CLOCK_LO:
        *val = extract64(qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL), 0, 32);
        return true;
    case PVDC_REG_CLOCK_HI:
        *val = extract64(qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL), 32, 32);
        return true;
    case PVDC_REG_FORMATS_PRIMARY:
        *val = pvdc_format_mask(PVDC_PLANE_TYPE_PRIMARY);
        return true;
    case PVDC_REG_FORMATS_OVERLAY:
        *val = pvdc_format_mask(PVDC_PLANE_TYPE_OVERLAY);
        return true;
    case PVDC_REG_FORMATS_CURSOR:
        *val = pvdc_format_mask(PVDC_PLANE_TYPE_CURSOR);
        return true;
    case PVDC_REG_FORMATS_WRITEBACK:
        *val = pvdc_writeback_format_mask();
        return true;
    }
    if (addr >= PVDC_REG_FORMAT_TABLE(0) &&
        addr < PVDC_REG_FORMAT_TABLE(PVDC_MAX_FORMATS)) {
        unsigned int i = (addr - PVDC_REG_FORMAT_TABLE(0)) / 4;

        *val = i < PVDC_COMPOSE_NUM_FORMATS ?
               pvdc_compose_formats[i].fourcc : 0;
        return true;
    }
    /* pvdc series: memory */
    if (pvdc_memory_read(s, addr, val)) {
        return true;
    }
    /* pvdc series: end memory */
    return false;
}

static bool pvdc_head_control_read(PVDCState *s, unsigned int h,
                                   hwaddr offset, int64_t now, uint32_t *val)
{
    PVDCHead *head = &s->heads[h];

    switch (offset) {
    case PVDC_HEAD_DOORBELL:
        *val = head->is_armed;
        return true;
    case PVDC_HEAD_ARMED_SEQ:
        *val = head->armed_seq;
        return true;
    case PVDC_HEAD_DONE_SEQ:
        *val = head->done_seq;
        return true;
    case PVDC_HEAD_RESULT:
        *val = head->result;
        return true;
    case PVDC_HEAD_DONE_FRAME:
        *val = head->done_frame;
        return true;
    case PVDC_HEAD_VBLANK_COUNT:
        /* modulo 2^32: the register is the low half of the count */
        *val = extract64(pvdc_vblank_count(head, now), 0, 32);
        return true;
    case PVDC_HEAD_VBLANK_TIME_LO: {
        uint64_t t = pvdc_vblank_time(head, now);

        /* HI is read next: keep the half that goes with this LO. */
        head->vblank_time_hi = extract64(t, 32, 32);
        *val = extract64(t, 0, 32);
        return true;
    }
    case PVDC_HEAD_VBLANK_TIME_HI:
        *val = head->vblank_time_hi;
        return true;
    case PVDC_HEAD_CONNECTOR:
        *val = PVDC_CONNECTOR_CONNECTED;
        return true;
    /* pvdc series: outputs */
    /* Of connector @h, whatever head drives it. */
    case PVDC_HEAD_PREFERRED:
        *val = pvdc_output_preferred(s, h);
        return true;
    case PVDC_HEAD_SUGGESTED_POS:
        *val = pvdc_output_position(s, h);
        return true;
    /* pvdc series: end outputs */
    /* pvdc series: capture */
    case PVDC_HEAD_CRC_CTRL:
        *val = head->crc_ctrl;
        return true;
    case PVDC_HEAD_CRC_VALUE:
        *val = pvdc_crc_read(head, now);
        return true;
    case PVDC_HEAD_CRC_FRAME:
        *val = head->crc_frame;
        return true;
    /* pvdc series: end capture */
    case PVDC_HEAD_STATUS:
        *val = head->status;
        return true;
    case PVDC_HEAD_FRAME_PERIOD:
        *val = MIN(head->period_ns, UINT32_MAX);
        return true;
    default:
        return false;
    }
}

static uint64_t pvdc_mmio_read(void *opaque, hwaddr addr, unsigned size)
{
    PVDCState *s = opaque;
    int64_t now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
    unsigned int i;
    hwaddr offset;
    uint32_t *reg;
    uint32_t val = 0;
    bool known = false;

    if (!pvdc_alive(s)) {
        return 0;
    }
    pvdc_catch_up(s, now);
    if (!pvdc_alive(s)) {
        return 0;       /* unplugged by an interrupt message of catching up */
    }
    if (addr < PVDC_GLOBAL_END) {
        known = pvdc_global_read(s, addr, &val);
    } else if (pvdc_window(addr, PVDC_REG_PLANE_CAPS(0), 4, s->num_planes,
                           &i, &offset)) {
        val = pvdc_plane_caps(s, i);
        known = true;
    } else if (pvdc_window(addr, PVDC_HEAD_CONTROL_BASE, PVDC_HEAD_STRIDE,
                           s->conf.num_heads, &i, &offset)) {
        known = pvdc_head_control_read(s, i, offset, now, &val);
    } else if (pvdc_window(addr, PVDC_HEAD_SHADOW_BASE, PVDC_HEAD_STRIDE,
                           s->conf.num_heads, &i, &offset)) {
        reg = pvdc_head_reg(&s->heads[i].shadow, offset);
        known = reg;
        val = reg ? *reg : 0;
    } else if (pvdc_window(addr, PVDC_HEAD_ACTIVE_BASE, PVDC_HEAD_STRIDE,
                           s->conf.num_heads, &i, &offset)) {
        reg = pvdc_head_reg(&s->heads[i].active, offset);
        known = reg;
        val = reg ? *reg : 0;
    } else if (pvdc_window(addr, PVDC_PLANE_SHADOW_BASE, PVDC_PLANE_STRIDE,
                           s->num_planes, &i, &offset)) {
        reg = pvdc_plane_reg(&s->planes[i].shadow, offset);
        known = reg;
        val = reg ? *reg : 0;
    } else if (pvdc_window(addr, PVDC_PLANE_ACTIVE_BASE, PVDC_PLANE_STRIDE,
                           s->num_planes, &i, &offset)) {
        reg = pvdc_plane_reg(&s->planes[i].active, offset);
        known = reg;
        val = reg ? *reg : 0;
    /* pvdc series: outputs */
    } else if (pvdc_window(addr, PVDC_EDID_BASE, PVDC_EDID_SIZE,
                           s->conf.num_heads, &i, &offset)) {
        val = ldl_le_p(&s->edid[i][offset]);
        known = true;
    /* pvdc series: end outputs */
    }

    if (!known) {
        qemu_log_mask(LOG_GUEST_ERROR, "pvdc: read of unknown register 0x%"
                      HWADDR_PRIx "\n", addr);
    }
    trace_pvdc_mmio_read(addr, val);
    return val;
}

static void pvdc_global_write(PVDCState *s, hwaddr addr, uint32_t val)
{
    uint32_t all_heads = MAKE_64BIT_MASK(0, s->conf.num_heads);
    uint32_t all_ints = MAKE_64BIT_MASK(0, s->conf.num_heads *
                                           PVDC_INT_BITS_PER_HEAD);
    uint32_t was_pending;

    switch (addr) {
    case PVDC_REG_INT_STATUS:
        was_pending = s->int_status & s->int_enable;
        s->int_status &= ~val;
        pvdc_irq_update(s, was_pending);
        pvdc_timer_update(s);
        break;
    case PVDC_REG_INT_ENABLE:
        if (val & ~all_ints) {
            qemu_log_mask(LOG_GUEST_ERROR, "pvdc: INT_ENABLE 0x%x has bits "
                          "of heads that do not exist; ignored\n", val);
            break;
        }
        pvdc_set_int_enable(s, val);
        break;
    case PVDC_REG_MULTI_DOORBELL:
        if (!val || (val & ~all_heads)) {
            qemu_log_mask(LOG_GUEST_ERROR, "pvdc: MULTI_DOORBELL 0x%x names "
                          "no head or heads that do not exist; ignored\n",
                          val);
            break;
        }
        pvdc_doorbell(s, val);
        break;
    default:
        /* pvdc series: memory */
        if (pvdc_memory_write(s, addr, val)) {
            break;
        }
        /* pvdc series: end memory */
        qemu_log_mask(LOG_GUEST_ERROR, "pvdc: write 0x%x to read-only or "
                      "unknown register 0x%" HWADDR_PRIx "; ignored\n",
                      val, addr);
        break;
    }
}

static void pvdc_head_control_write(PVDCState *s, unsigned int h,
                                    hwaddr offset, uint32_t val)
{
    PVDCHead *head = &s->heads[h];

    switch (offset) {
    case PVDC_HEAD_DOORBELL:
        if (val == PVDC_DOORBELL_ARM) {
            pvdc_doorbell(s, BIT(h));
        } else if (val == PVDC_DOORBELL_AMEND) {
            pvdc_doorbell_amend(s, h);
        } else if (val) {
            qemu_log_mask(LOG_GUEST_ERROR, "pvdc: head %u: doorbell value "
                          "0x%x is not a PVDC_DOORBELL_*; ignored\n", h, val);
        }
        break;
    case PVDC_HEAD_STATUS:
        head->status &= ~val;
        break;
    /* pvdc series: capture */
    case PVDC_HEAD_CRC_CTRL:
        if (val & ~PVDC_CRC_CTRL_ENABLE) {
            qemu_log_mask(LOG_GUEST_ERROR, "pvdc: head %u: CRC_CTRL 0x%x "
                          "has reserved bits; ignored\n", h, val);
            break;
        }
        head->crc_ctrl = val;
        break;
    /* pvdc series: end capture */
    default:
        qemu_log_mask(LOG_GUEST_ERROR, "pvdc: head %u: write 0x%x to "
                      "read-only or unknown control register 0x%"
                      HWADDR_PRIx "; ignored\n", h, val, offset);
        break;
    }
}

static void pvdc_mmio_write(void *opaque, hwaddr addr, uint64_t val64,
                            unsigned size)
{
    PVDCState *s = opaque;
    uint32_t val = val64;
    unsigned int i;
    hwaddr offset;
    uint32_t *reg = NULL;

    trace_pvdc_mmio_write(addr, val);
    if (!pvdc_alive(s)) {
        return;
    }
    s->mmio_writes++;
    pvdc_catch_up(s, qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL));
    if (!pvdc_alive(s)) {
        return;         /* unplugged by an interrupt message of catching up */
    }

    if (addr < PVDC_GLOBAL_END) {
        pvdc_global_write(s, addr, val);
        return;
    }
    if (pvdc_window(addr, PVDC_HEAD_CONTROL_BASE, PVDC_HEAD_STRIDE,
                    s->conf.num_heads, &i, &offset)) {
        pvdc_head_control_write(s, i, offset, val);
        return;
    }
    if (pvdc_window(addr, PVDC_HEAD_SHADOW_BASE, PVDC_HEAD_STRIDE,
                    s->conf.num_heads, &i, &offset)) {
        reg = pvdc_head_reg(&s->heads[i].shadow, offset);
    } else if (pvdc_window(addr, PVDC_PLANE_SHADOW_BASE, PVDC_PLANE_STRIDE,
                           s->num_planes, &i, &offset)) {
        reg = pvdc_plane_reg(&s->planes[i].shadow, offset);
    }
    if (reg) {
        *reg = val;
        return;
    }
    qemu_log_mask(LOG_GUEST_ERROR, "pvdc: write 0x%x to read-only or unknown "
                  "register 0x%" HWADDR_PRIx "; ignored\n", val, addr);
}

const MemoryRegionOps pvdc_mmio_ops = {
    .read = pvdc_mmio_read,
    .write = pvdc_mmio_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = {
        .min_access_size = 4,
        .max_access_size = 8,
    },
    .impl = {
        .min_access_size = 4,
        .max_access_size = 4,
    },
};
