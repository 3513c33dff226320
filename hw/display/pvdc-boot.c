/*
 * pvdc: paravirtual display controller - the boot display.
 *
 * Firmware, boot loaders, installers and guests without the pvdc driver
 * know nothing of the heads.  They get a ramfb companion: a linear
 * framebuffer in guest RAM set up through the fw_cfg file etc/ramfb, which
 * SeaBIOS (vgabios-ramfb.bin, a VGA BIOS that also draws its text services
 * there) and OVMF (QemuRamfbDxe, a GOP) already drive, as they do for
 * vfio-pci's display=on,ramfb=on.  Head 0's console shows it from a device
 * reset until a guest enables a head; from then on the device never reads
 * that memory again (the driver lets the guest reuse it), until the next
 * device reset.  The console's own refresh shows it: no timer of its own.
 *
 * A machine has one etc/ramfb, and fw_cfg files are fixed once the machine
 * is ready: the ramfb property (auto) gives the companion to the first
 * pvdc of a machine whose fw_cfg has DMA, and refuses it (on) or leaves it
 * out (auto) for the others and for a device plugged later.
 *
 * Copyright (c) 2026 The pvdc authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/error-report.h"
#include "qapi/error.h"
#include "hw/display/ramfb.h"
#include "hw/nvram/fw_cfg.h"
#include "migration/vmstate.h"
#include "pvdc-internal.h"
#include "trace.h"

/* The fw_cfg file ramfb_setup() adds; one per machine. */
#define PVDC_RAMFB_FILE "etc/ramfb"

/* Why this machine cannot give @s a ramfb, or NULL if it can. */
static const char *pvdc_boot_unavailable(PVDCState *s)
{
    FWCfgState *fw_cfg = fw_cfg_find();
    uint32_t count, i;

    if (DEVICE(s)->hotplugged) {
        return "fw_cfg files cannot be added to a running machine";
    }
    if (!fw_cfg || !fw_cfg->dma_enabled) {
        return "the machine has no fw_cfg with DMA";
    }
    count = fw_cfg->files ? be32_to_cpu(fw_cfg->files->count) : 0;
    for (i = 0; i < count; i++) {
        if (!strcmp(fw_cfg->files->f[i].name, PVDC_RAMFB_FILE)) {
            return "another device has the machine's " PVDC_RAMFB_FILE;
        }
    }
    return NULL;
}

/*
 * The companion lives as long as the machine: fw_cfg keeps calling it
 * when the guest writes etc/ramfb, even after an unplug.
 */
bool pvdc_boot_realize(PVDCState *s, Error **errp)
{
    const char *why;

    if (s->ramfb == ON_OFF_AUTO_OFF) {
        return true;
    }
    why = pvdc_boot_unavailable(s);
    if (why) {
        if (s->ramfb == ON_OFF_AUTO_ON) {
            error_setg(errp, "pvdc: ramfb=on: %s", why);
            error_append_hint(errp, "Use ramfb=off or ramfb=auto: the "
                              "device then has no boot display.\n");
            return false;
        }
        trace_pvdc_boot_skipped(why);
        return true;
    }
    s->boot_ramfb = ramfb_setup(errp);
    return s->boot_ramfb != NULL;
}

void pvdc_boot_reset(PVDCState *s)
{
    s->boot_display = s->boot_ramfb != NULL;
    if (s->boot_display) {
        trace_pvdc_boot_display(true);
    }
}

void pvdc_boot_end(PVDCState *s)
{
    if (!s->boot_display) {
        return;
    }
    s->boot_display = false;
    trace_pvdc_boot_display(false);
    /*
     * ramfb hands a framebuffer the guest described over at the console's
     * next refresh.  Take it now, so that one described before this
     * instant and never shown does not come back after a reset, from
     * memory the guest has reused since; the console's next refresh
     * replaces it, and that lets go of the memory.
     */
    ramfb_display_update(s->connectors[0].con, s->boot_ramfb);
}

void pvdc_boot_display_update(PVDCState *s, QemuConsole *con)
{
    /* Nothing until the firmware has set a framebuffer up. */
    ramfb_display_update(con, s->boot_ramfb);
}

static bool pvdc_boot_needed(void *opaque)
{
    PVDCState *s = opaque;

    return s->boot_display;
}

static int pvdc_boot_pre_load(void *opaque)
{
    return pvdc_subsection_pre_load(opaque, PVDC_SUBSECTION_BOOT);
}

/* Checked before ramfb's state is loaded into the companion. */
static bool pvdc_boot_has_ramfb(void *opaque, int version_id)
{
    PVDCState *s = opaque;

    return s->boot_ramfb != NULL;
}

static int pvdc_boot_post_load(void *opaque, int version_id)
{
    PVDCState *s = opaque;
    unsigned int h;

    /* The source ends the boot display at its first enabled head. */
    for (h = 0; h < s->conf.num_heads; h++) {
        if (pvdc_head_on(&s->heads[h])) {
            error_report("pvdc: the stream shows the boot display beside "
                         "enabled head %u", h);
            return -EINVAL;
        }
    }
    s->boot_display = true;
    return 0;
}

/*
 * While head 0 shows the boot display: the framebuffer the firmware set up
 * (ramfb's own state).  Without this subsection the boot display is over.
 */
const VMStateDescription vmstate_pvdc_boot = {
    .name = "pvdc/boot",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = pvdc_boot_needed,
    .pre_load = pvdc_boot_pre_load,
    .post_load = pvdc_boot_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_VALIDATE("the destination has ramfb", pvdc_boot_has_ramfb),
        VMSTATE_STRUCT_POINTER(boot_ramfb, PVDCState, ramfb_vmstate,
                               RAMFBState),
        VMSTATE_END_OF_LIST()
    },
};
