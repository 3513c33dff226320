/*
 * pvdc: paravirtual display controller with atomic commits.
 *
 * PCI device, QOM type, properties and the register file.
 * The register map is include/hw/display/pvdc-regs.h, its behaviour
 * docs/specs/pvdc.rst.
 *
 * Copyright (c) 2026 The pvdc authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/module.h"
#include "qemu/units.h"
#include "qapi/error.h"
#include "hw/pci/pci.h"
#include "hw/qdev-properties.h"
#include "migration/vmstate.h"
#include "hw/display/pvdc.h"
#include "trace.h"

static uint64_t pvdc_mmio_read(void *opaque, hwaddr addr, unsigned size)
{
    PVDCState *s = opaque;
    uint64_t val = 0;

    switch (addr) {
    case PVDC_REG_ID:
        val = PVDC_ID;
        break;
    case PVDC_REG_VERSION:
        val = (PVDC_VERSION_MAJOR << 16) | PVDC_VERSION_MINOR;
        break;
    case PVDC_REG_NUM_HEADS:
        val = s->num_heads;
        break;
    case PVDC_REG_NUM_OVERLAYS:
        val = s->num_overlays;
        break;
    case PVDC_REG_NUM_PLANES:
        val = s->num_heads * (s->num_overlays + 2);
        break;
    case PVDC_REG_NUM_SCALERS:
        val = s->num_scalers;
        break;
    case PVDC_REG_VRAM_SIZE_LO:
        val = extract64(s->vram_size, 0, 32);
        break;
    case PVDC_REG_VRAM_SIZE_HI:
        val = extract64(s->vram_size, 32, 32);
        break;
    case PVDC_REG_MAX_SIZE:
        val = PVDC_XY(s->max_width, s->max_height);
        break;
    default:
        qemu_log_mask(LOG_UNIMP, "pvdc: read of unimplemented register 0x%"
                      HWADDR_PRIx "\n", addr);
        break;
    }
    trace_pvdc_mmio_read(addr, val);
    return val;
}

static void pvdc_mmio_write(void *opaque, hwaddr addr, uint64_t val,
                            unsigned size)
{
    trace_pvdc_mmio_write(addr, val);
    qemu_log_mask(LOG_GUEST_ERROR, "pvdc: write to read-only or unknown "
                  "register 0x%" HWADDR_PRIx "\n", addr);
}

static const MemoryRegionOps pvdc_mmio_ops = {
    .read = pvdc_mmio_read,
    .write = pvdc_mmio_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = {
        .min_access_size = 4,
        .max_access_size = 4,
    },
    .impl = {
        .min_access_size = 4,
        .max_access_size = 4,
    },
};

static void pvdc_gfx_update(void *opaque)
{
    PVDCHead *head = opaque;
    DisplaySurface *surface = qemu_console_surface(head->con);

    if (!surface || surface_width(surface) != 640 ||
        surface_height(surface) != 480) {
        surface = qemu_create_displaysurface(640, 480);
        dpy_gfx_replace_surface(head->con, surface);
        dpy_gfx_update_full(head->con);
    }
}

static const GraphicHwOps pvdc_gfx_ops = {
    .gfx_update = pvdc_gfx_update,
};

static void pvdc_realize(PCIDevice *dev, Error **errp)
{
    PVDCState *s = PVDC(dev);
    unsigned int h;

    if (s->num_heads < 1 || s->num_heads > PVDC_MAX_HEADS) {
        error_setg(errp, "pvdc: heads must be between 1 and %d", PVDC_MAX_HEADS);
        return;
    }
    if (s->num_overlays > PVDC_MAX_OVERLAYS) {
        error_setg(errp, "pvdc: overlays must be at most %d", PVDC_MAX_OVERLAYS);
        return;
    }
    if (s->vram_size < 16 * MiB || s->vram_size > 1 * GiB ||
        !is_power_of_2(s->vram_size)) {
        error_setg(errp, "pvdc: vram-size must be a power of two between "
                   "16 MiB and 1 GiB");
        return;
    }

    memory_region_init_io(&s->mmio, OBJECT(s), &pvdc_mmio_ops, s, "pvdc.mmio",
                          PVDC_MMIO_SIZE);
    pci_register_bar(dev, PVDC_MMIO_BAR, PCI_BASE_ADDRESS_SPACE_MEMORY,
                     &s->mmio);

    if (!memory_region_init_ram(&s->vram, OBJECT(s), "pvdc.vram",
                                s->vram_size, errp)) {
        return;
    }
    pci_register_bar(dev, PVDC_VRAM_BAR, PCI_BASE_ADDRESS_SPACE_MEMORY |
                     PCI_BASE_ADDRESS_MEM_PREFETCH, &s->vram);

    for (h = 0; h < s->num_heads; h++) {
        s->heads[h].dev = s;
        s->heads[h].index = h;
        s->heads[h].con = graphic_console_init(DEVICE(dev), h, &pvdc_gfx_ops,
                                               &s->heads[h]);
    }
}

static void pvdc_exit(PCIDevice *dev)
{
    PVDCState *s = PVDC(dev);
    unsigned int h;

    for (h = 0; h < s->num_heads; h++) {
        graphic_console_close(s->heads[h].con);
    }
}

static const VMStateDescription vmstate_pvdc = {
    .name = "pvdc",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_PCI_DEVICE(parent_obj, PVDCState),
        VMSTATE_END_OF_LIST()
    },
};

static const Property pvdc_properties[] = {
    DEFINE_PROP_UINT32("heads", PVDCState, num_heads, 2),
    DEFINE_PROP_UINT32("overlays", PVDCState, num_overlays, 3),
    DEFINE_PROP_UINT32("scalers", PVDCState, num_scalers, 2),
    DEFINE_PROP_SIZE("vram-size", PVDCState, vram_size, 64 * MiB),
    DEFINE_PROP_UINT32("max-width", PVDCState, max_width, 4096),
    DEFINE_PROP_UINT32("max-height", PVDCState, max_height, 4096),
};

static void pvdc_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);
    PCIDeviceClass *k = PCI_DEVICE_CLASS(klass);

    k->vendor_id = PVDC_PCI_VENDOR_ID;
    k->device_id = PVDC_PCI_DEVICE_ID;
    k->revision = PVDC_PCI_REVISION;
    k->class_id = PCI_CLASS_DISPLAY_OTHER;
    k->realize = pvdc_realize;
    k->exit = pvdc_exit;

    dc->desc = "Paravirtual display controller with atomic commits";
    dc->vmsd = &vmstate_pvdc;
    device_class_set_props(dc, pvdc_properties);
    set_bit(DEVICE_CATEGORY_DISPLAY, dc->categories);
}

static const TypeInfo pvdc_types[] = {
    {
        .name = TYPE_PVDC,
        .parent = TYPE_PCI_DEVICE,
        .instance_size = sizeof(PVDCState),
        .class_init = pvdc_class_init,
        .interfaces = (InterfaceInfo[]) {
            { INTERFACE_CONVENTIONAL_PCI_DEVICE },
            { }
        },
    },
};

DEFINE_TYPES(pvdc_types)
