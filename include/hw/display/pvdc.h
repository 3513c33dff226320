/*
 * pvdc: paravirtual display controller with atomic commits.
 *
 * Copyright (c) 2026 The pvdc authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef HW_DISPLAY_PVDC_H
#define HW_DISPLAY_PVDC_H

#include "hw/pci/pci_device.h"
#include "ui/console.h"
#include "hw/display/pvdc-regs.h"
#include "qom/object.h"

#define TYPE_PVDC "pvdc"
OBJECT_DECLARE_SIMPLE_TYPE(PVDCState, PVDC)

typedef struct PVDCHead {
    PVDCState *dev;
    unsigned int index;
    QemuConsole *con;
} PVDCHead;

struct PVDCState {
    PCIDevice parent_obj;

    MemoryRegion mmio;
    MemoryRegion vram;

    /* properties */
    uint32_t num_heads;
    uint32_t num_overlays;
    uint32_t num_scalers;
    uint64_t vram_size;
    uint32_t max_width;
    uint32_t max_height;

    PVDCHead heads[PVDC_MAX_HEADS];
};

#endif /* HW_DISPLAY_PVDC_H */
