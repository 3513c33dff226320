/*
 * pvdc: paravirtual display controller - interfaces between the parts of
 * the device model.
 *
 *   pvdc.c         QOM type, properties, realize, reset, migration
 *   pvdc-mmio.c    register file: read/write dispatch
 *   pvdc-commit.c  doorbells, validation rules, applying a commit
 *   pvdc-vblank.c  vblank timelines, the timer, interrupts
 *   pvdc-console.c one QEMU console per head, frame CRCs
 *   pvdc-compose.c composition of the active planes into a picture
 *   pvdc-output.c  connectors: EDID, preferred mode, hotplug
 *
 * Copyright (c) 2026 The pvdc authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef HW_DISPLAY_PVDC_INTERNAL_H
#define HW_DISPLAY_PVDC_INTERNAL_H

#include "hw/display/pvdc.h"

/*
 * Fixed limits of this implementation.  Guests read them from the
 * capability registers; they are only spelled here.
 */
#define PVDC_CURSOR_MAX_SIZE            256
#define PVDC_PITCH_ALIGNMENT            64
#define PVDC_OFFSET_ALIGNMENT           64
#define PVDC_MAX_DOWNSCALE              4
#define PVDC_MAX_UPSCALE                8
#define PVDC_MAX_SIZE_LIMIT             16384
/* Three 1920x1080 XRGB8888 planes, in KiB per frame. */
#define PVDC_DEFAULT_BANDWIDTH_PER_HEAD 24300
#define PVDC_MAX_LINK_UP_DELAY_MS       60000
/* Preferred mode of the connectors unless the xres/yres properties say. */
#define PVDC_DEFAULT_XRES               1024
#define PVDC_DEFAULT_YRES               768

typedef struct PVDCFormat {
    uint32_t fourcc;
    uint32_t cpp;
} PVDCFormat;

extern const PVDCFormat pvdc_formats[];
extern const unsigned int pvdc_num_formats;
uint32_t pvdc_format_mask(unsigned int plane_type);

/* pvdc.c */
uint32_t pvdc_plane_type(PVDCState *s, unsigned int plane);
uint32_t pvdc_plane_home(PVDCState *s, unsigned int plane);
uint32_t pvdc_plane_caps(PVDCState *s, unsigned int plane);

/* pvdc-mmio.c */
extern const MemoryRegionOps pvdc_mmio_ops;

/* pvdc-commit.c */
void pvdc_doorbell(PVDCState *s, uint32_t mask);
void pvdc_doorbell_amend(PVDCState *s, unsigned int head);
uint32_t pvdc_armed_mask(PVDCState *s);
void pvdc_latch_due_commits(PVDCState *s, int64_t now);
bool pvdc_next_latch(PVDCState *s, int64_t *deadline);
uint64_t pvdc_mode_period_ns(const PVDCHeadRegs *regs);

/* pvdc-vblank.c */
uint32_t pvdc_vblank_count(PVDCHead *head, int64_t now);
int64_t pvdc_vblank_time(PVDCHead *head, int64_t now);
int64_t pvdc_next_vblank(PVDCHead *head, int64_t after);
void pvdc_timeline_enable(PVDCHead *head, int64_t when);
void pvdc_timeline_disable(PVDCHead *head, int64_t when);
void pvdc_timer_update(PVDCState *s);
void pvdc_timer_cb(void *opaque);
void pvdc_irq_raise(PVDCState *s, unsigned int head, uint32_t bits);
void pvdc_irq_update(PVDCState *s, uint32_t was_pending);
void pvdc_set_int_enable(PVDCState *s, uint32_t val);

/* pvdc-console.c */
void pvdc_console_instance_init(PVDCState *s);
void pvdc_console_init(PVDCState *s);
void pvdc_console_fini(PVDCState *s);
/*
 * Capture the CRC of the frame that starts now on every head that has CRC
 * capture enabled and reached a new vblank (or was just enabled).
 */
void pvdc_crc_capture_due(PVDCState *s, int64_t now);
/*
 * The active state of @head changed: its picture must be composed again
 * before it is next shown.
 */
void pvdc_compose_invalidate(PVDCHead *head);

/* pvdc-output.c */
extern const VMStateDescription vmstate_pvdc_output;
void pvdc_output_instance_init(PVDCState *s);
bool pvdc_output_realize(PVDCState *s, Error **errp);
uint32_t pvdc_output_preferred(PVDCHead *head);
uint32_t pvdc_output_position(PVDCHead *head);
/* The host display of @head asks for another mode (GraphicHwOps.ui_info). */
void pvdc_output_ui_info(PVDCHead *head, const QemuUIInfo *info);

#endif /* HW_DISPLAY_PVDC_INTERNAL_H */
