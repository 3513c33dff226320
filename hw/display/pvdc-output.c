/*
 * pvdc: paravirtual display controller - connectors: EDID, preferred mode,
 * suggested position and hotplug.
 *
 * There are as many connectors as heads, always connected; connector c
 * is described in heads[c], whatever head drives it (HS_CONNECTOR).  What
 * it tells the guest is set by the host: at start-up by the xres/yres
 * properties (all connectors) or the per-connector properties below, and
 * at run time by the same properties (qom-set) or by the UI when the
 * window of console c is resized (GraphicHwOps.ui_info).  Any change
 * regenerates EDID(c) and raises PVDC_INT_HOTPLUG in the bits of head c,
 * for the guest to read the connector again.
 *
 * Per-connector properties, for connector N in 0..PVDC_MAX_HEADS - 1,
 * named after the head of the same index as they were before routing
 * (setting one of a connector the device does not have fails once it is
 * realized):
 *   headN-xres, headN-yres   preferred mode (0: the xres/yres properties)
 *   headN-x, headN-y         suggested position on the host desktop
 *                            (default: right of the heads before it)
 *
 * Copyright (c) 2026 The pvdc authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qapi/error.h"
#include "qapi/visitor.h"
#include "hw/display/edid.h"
#include "migration/vmstate.h"
#include "pvdc-internal.h"
#include "trace.h"

typedef enum PVDCOutputField {
    PVDC_OUTPUT_XRES,
    PVDC_OUTPUT_YRES,
    PVDC_OUTPUT_X,
    PVDC_OUTPUT_Y,
    PVDC_OUTPUT_NUM_FIELDS
} PVDCOutputField;

static const struct {
    const char *name;
    const char *description;
} pvdc_output_fields[] = {
    [PVDC_OUTPUT_XRES] = { "xres", "preferred width of head %u, pixels "
                           "(0: the xres property); raises a hotplug "
                           "interrupt when changed at run time" },
    [PVDC_OUTPUT_YRES] = { "yres", "preferred height of head %u, pixels "
                           "(0: the yres property); raises a hotplug "
                           "interrupt when changed at run time" },
    [PVDC_OUTPUT_X] = { "x", "suggested horizontal position of head %u on "
                        "the host desktop (default: right of the heads "
                        "before it)" },
    [PVDC_OUTPUT_Y] = { "y", "suggested vertical position of head %u on "
                        "the host desktop (default: 0)" },
};

/* What a per-head property is about: one per head and field. */
typedef struct PVDCOutputProp {
    PVDCState *s;
    unsigned int head;
    PVDCOutputField field;
} PVDCOutputProp;

static bool pvdc_realized(PVDCState *s)
{
    return DEVICE(s)->realized;
}

/*
 * The preferred mode's timings are qemu_edid_generate()'s: 35 % of the
 * width and 3.5 % of the height as blanking, at 75 Hz unless the UI
 * says otherwise.  For the largest modes that is more than the pixel
 * clock HS_MODE takes (7680x4320 at 75 Hz: 3.5 GHz): the EDID then gets
 * the highest refresh rate, in mHz, whose clock the device takes, so
 * that the guest can set the mode it lists.
 */
#define PVDC_EDID_REFRESH_MHZ           75000

static uint32_t pvdc_edid_refresh(uint32_t width, uint32_t height,
                                  uint32_t wanted)
{
    uint64_t htotal = width + (uint64_t)width * 35 / 100;
    uint64_t vtotal = height + (uint64_t)height * 35 / 1000;
    uint64_t most = (uint64_t)PVDC_MAX_PIXEL_CLOCK_KHZ * 1000000 /
                    MAX(htotal * vtotal, 1);

    return MIN(wanted ? wanted : PVDC_EDID_REFRESH_MHZ, most);
}

static void pvdc_output_update_edid(PVDCHead *head, const QemuUIInfo *ui)
{
    PVDCState *s = head->dev;
    char serial[16];
    qemu_edid_info info = {
        .prefx = head->pref_width,
        .prefy = head->pref_height,
        .maxx = s->conf.max_width,
        .maxy = s->conf.max_height,
        .serial = serial,
    };

    if (ui) {
        info.width_mm = ui->width_mm;
        info.height_mm = ui->height_mm;
    }
    info.refresh_rate = pvdc_edid_refresh(info.prefx, info.prefy,
                                          ui ? ui->refresh_rate : 0);
    /* distinct serials keep the guest from taking two heads for one */
    snprintf(serial, sizeof(serial), "pvdc-%u", head->index);
    /* The generator only adds to the buffer: extensions, mode bits. */
    memset(s->edid[head->index], 0, sizeof(s->edid[head->index]));
    qemu_edid_generate(s->edid[head->index], sizeof(s->edid[head->index]),
                       &info);
}

uint32_t pvdc_output_preferred(PVDCState *s, unsigned int connector)
{
    return PVDC_XY(s->heads[connector].pref_width,
                   s->heads[connector].pref_height);
}

uint32_t pvdc_output_position(PVDCState *s, unsigned int connector)
{
    uint32_t x = 0;
    unsigned int h;

    if (s->heads[connector].pos_set) {
        return PVDC_XY(s->heads[connector].pos_x, s->heads[connector].pos_y);
    }
    for (h = 0; h < connector; h++) {
        x += s->heads[h].pref_width ? s->heads[h].pref_width : s->xres;
    }
    return PVDC_XY(MIN(x, UINT16_MAX), 0);
}

/*
 * The host changed what the connector of @head says: tell the guest.
 * Heads placed automatically move with the width of the heads before them.
 */
static void pvdc_output_changed(PVDCHead *head, const QemuUIInfo *ui,
                                bool width_changed)
{
    PVDCState *s = head->dev;
    uint32_t bits = PVDC_INT(head->index, PVDC_INT_HOTPLUG);
    unsigned int h;

    pvdc_output_update_edid(head, ui);
    trace_pvdc_hotplug(head->index, head->pref_width, head->pref_height,
                       pvdc_output_position(s, head->index));
    for (h = head->index + 1; width_changed && h < s->conf.num_heads; h++) {
        if (!s->heads[h].pos_set) {
            bits |= PVDC_INT(h, PVDC_INT_HOTPLUG);
        }
    }
    pvdc_irq_raise(s, bits);
}

/*
 * Only the size is taken from the UI: the offsets UIs report are those of
 * their windows, not a layout of the guest's desktop.
 */
void pvdc_output_ui_info(PVDCState *s, unsigned int connector,
                         const QemuUIInfo *info)
{
    PVDCHead *head = &s->heads[connector];
    uint32_t width = MIN(info->width, s->conf.max_width);
    uint32_t height = MIN(info->height, s->conf.max_height);
    bool width_changed = width != head->pref_width;

    /* A window being closed or minimised keeps the last mode. */
    if (!width || !height ||
        (!width_changed && height == head->pref_height)) {
        return;
    }
    head->pref_width = width;
    head->pref_height = height;
    pvdc_output_changed(head, info, width_changed);
}

static uint32_t *pvdc_output_field(PVDCHead *head, PVDCOutputField field)
{
    switch (field) {
    case PVDC_OUTPUT_XRES:
        return &head->pref_width;
    case PVDC_OUTPUT_YRES:
        return &head->pref_height;
    case PVDC_OUTPUT_X:
        return &head->pos_x;
    case PVDC_OUTPUT_Y:
        return &head->pos_y;
    default:
        g_assert_not_reached();
    }
}

static void pvdc_output_prop_get(Object *obj, Visitor *v, const char *name,
                                 void *opaque, Error **errp)
{
    PVDCOutputProp *prop = opaque;
    PVDCHead *head = &prop->s->heads[prop->head];
    uint32_t value;

    switch (prop->field) {
    case PVDC_OUTPUT_X:
        value = FIELD_EX32(pvdc_output_position(prop->s, prop->head), XY, X);
        break;
    case PVDC_OUTPUT_Y:
        value = FIELD_EX32(pvdc_output_position(prop->s, prop->head), XY, Y);
        break;
    default:
        value = *pvdc_output_field(head, prop->field);
        break;
    }
    visit_type_uint32(v, name, &value, errp);
}

static void pvdc_output_prop_set(Object *obj, Visitor *v, const char *name,
                                 void *opaque, Error **errp)
{
    PVDCOutputProp *prop = opaque;
    PVDCState *s = prop->s;
    PVDCHead *head = &s->heads[prop->head];
    uint32_t *field = pvdc_output_field(head, prop->field);
    bool is_pos = prop->field == PVDC_OUTPUT_X ||
                  prop->field == PVDC_OUTPUT_Y;
    uint32_t value, limit;

    if (!visit_type_uint32(v, name, &value, errp)) {
        return;
    }
    if (!pvdc_realized(s)) {
        /* checked against the other properties at realize */
        *field = value;
        head->pos_set |= is_pos;
        return;
    }
    if (prop->head >= s->conf.num_heads) {
        error_setg(errp, "pvdc: there is no head %u", prop->head);
        return;
    }
    switch (prop->field) {
    case PVDC_OUTPUT_XRES:
        limit = s->conf.max_width;
        break;
    case PVDC_OUTPUT_YRES:
        limit = s->conf.max_height;
        break;
    default:
        limit = UINT16_MAX;
        break;
    }
    if ((!is_pos && !value) || value > limit) {
        error_setg(errp, "pvdc: %s must be between %u and %u", name,
                   is_pos ? 0 : 1, limit);
        return;
    }
    if (is_pos && !head->pos_set) {
        uint32_t pos = pvdc_output_position(s, prop->head);

        head->pos_x = FIELD_EX32(pos, XY, X);
        head->pos_y = FIELD_EX32(pos, XY, Y);
        head->pos_set = true;
    }
    if (*field == value) {
        return;
    }
    *field = value;
    pvdc_output_changed(head, NULL, prop->field == PVDC_OUTPUT_XRES);
}

static void pvdc_output_prop_release(Object *obj, const char *name,
                                     void *opaque)
{
    g_free(opaque);
}

void pvdc_output_instance_init(PVDCState *s)
{
    unsigned int h, f;

    for (h = 0; h < PVDC_MAX_HEADS; h++) {
        for (f = 0; f < PVDC_OUTPUT_NUM_FIELDS; f++) {
            PVDCOutputProp *prop = g_new(PVDCOutputProp, 1);
            g_autofree char *name = g_strdup_printf("head%u-%s", h,
                                                    pvdc_output_fields[f].name);
            g_autofree char *desc = g_strdup_printf(
                pvdc_output_fields[f].description, h);

            prop->s = s;
            prop->head = h;
            prop->field = f;
            object_property_add(OBJECT(s), name, "uint32",
                                pvdc_output_prop_get, pvdc_output_prop_set,
                                pvdc_output_prop_release, prop);
            object_property_set_description(OBJECT(s), name, desc);
        }
    }
}

bool pvdc_output_realize(PVDCState *s, Error **errp)
{
    unsigned int h;

    for (h = s->conf.num_heads; h < PVDC_MAX_HEADS; h++) {
        if (s->heads[h].pref_width || s->heads[h].pref_height ||
            s->heads[h].pos_set) {
            error_setg(errp, "pvdc: head%u-* set but there is no head %u",
                       h, h);
            return false;
        }
    }
    for (h = 0; h < s->conf.num_heads; h++) {
        PVDCHead *head = &s->heads[h];

        if (!head->pref_width) {
            head->pref_width = s->xres;
        }
        if (!head->pref_height) {
            head->pref_height = s->yres;
        }
        if (head->pref_width > s->conf.max_width ||
            head->pref_height > s->conf.max_height) {
            error_setg(errp, "pvdc: head%u-xres and head%u-yres must be at "
                       "most max-width and max-height", h, h);
            return false;
        }
        if (head->pos_x > UINT16_MAX || head->pos_y > UINT16_MAX) {
            error_setg(errp, "pvdc: head%u-x and head%u-y must be at most %u",
                       h, h, UINT16_MAX);
            return false;
        }
        pvdc_output_update_edid(head, NULL);
    }
    return true;
}

static bool pvdc_output_needed(void *opaque)
{
    PVDCState *s = opaque;
    unsigned int h;

    for (h = 0; h < s->conf.num_heads; h++) {
        PVDCHead *head = &s->heads[h];

        if (head->pref_width != s->xres || head->pref_height != s->yres ||
            head->pos_set) {
            return true;
        }
        if (head->crc_value || head->crc_frame) {
            return true;
        }
    }
    return false;
}

static int pvdc_output_pre_load(void *opaque)
{
    return pvdc_subsection_pre_load(opaque, PVDC_SUBSECTION_OUTPUT);
}

static int pvdc_output_post_load(void *opaque, int version_id)
{
    PVDCState *s = opaque;
    unsigned int h;

    for (h = 0; h < s->conf.num_heads; h++) {
        PVDCHead *head = &s->heads[h];

        if (!head->pref_width || head->pref_width > s->conf.max_width ||
            !head->pref_height || head->pref_height > s->conf.max_height ||
            head->pos_x > UINT16_MAX || head->pos_y > UINT16_MAX) {
            return -EINVAL;
        }
        pvdc_output_update_edid(head, NULL);
    }
    return 0;
}

static const VMStateDescription vmstate_pvdc_head_output = {
    .name = "pvdc/head-output",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT32(crc_value, PVDCHead),
        VMSTATE_UINT32(crc_frame, PVDCHead),
        VMSTATE_UINT32(pref_width, PVDCHead),
        VMSTATE_UINT32(pref_height, PVDCHead),
        VMSTATE_UINT32(pos_x, PVDCHead),
        VMSTATE_UINT32(pos_y, PVDCHead),
        VMSTATE_BOOL(pos_set, PVDCHead),
        VMSTATE_END_OF_LIST()
    },
};

/* A subsection of vmstate_pvdc: connectors and captured CRCs. */
const VMStateDescription vmstate_pvdc_output = {
    .name = "pvdc/output",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = pvdc_output_needed,
    .pre_load = pvdc_output_pre_load,
    .post_load = pvdc_output_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_STRUCT_ARRAY(heads, PVDCState, PVDC_MAX_HEADS, 1,
                             vmstate_pvdc_head_output, PVDCHead),
        VMSTATE_END_OF_LIST()
    },
};
