/*
 * pvdc: paravirtual display controller - capture of the frames of each
 * head: their CRC and writeback, and the budget both compose within.
 *
 * CRC capture happens when the guest reads CRC_VALUE, once per frame: it
 * composes the whole head into an image of the device's own.  Writeback
 * composes the same way at the latch point of a commit that asks for it,
 * then writes the image into VRAM or through a binding's pages.  A
 * device-wide budget of pixels per second of virtual time bounds what
 * both can cost the host, however many heads read their CRC or write back
 * how often.
 *
 * Copyright (c) 2026 The pvdc authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "pvdc-compose.h"
#include "pvdc-internal.h"
#include "trace.h"

/* The frames of a head composed apart from the consoles. */
typedef struct PVDCCapture {
    /*
     * CRC capture: the frame image and the vblank last captured.  The
     * image is also where writeback composes, before it converts.
     */
    pixman_image_t *crc_image;
    bool crc_captured;
    uint64_t crc_count;
} PVDCCapture;

/* Pixels CRC capture may compose at once after a pause. */
#define PVDC_CRC_BURST          (PVDC_CRC_PIXELS_PER_SECOND / 8)
/*
 * The longest refill counted at once: more than pays back the largest
 * debt, one composition of PVDC_MAX_PLANES_PER_HEAD planes and a colour
 * pipeline on a 16384x16384 head (12 s worth), and small enough that
 * the pixels it refills fit in 64 bits.
 */
#define PVDC_BUDGET_REFILL_MAX_NS   (64 * NANOSECONDS_PER_SECOND)

void pvdc_capture_init(PVDCHead *head)
{
    head->capture = g_new0(PVDCCapture, 1);
}

void pvdc_capture_finalize(PVDCHead *head)
{
    if (head->capture) {
        qemu_pixman_image_unref(head->capture->crc_image);
        g_free(head->capture);
        head->capture = NULL;
    }
}

void pvdc_crc_invalidate(PVDCHead *head)
{
    if (head->capture) {
        head->capture->crc_captured = false;
    }
}

void pvdc_crc_budget_reset(PVDCState *s, int64_t now)
{
    s->crc_budget = PVDC_CRC_BURST;
    s->crc_budget_ns = now;
}

/* Refill the budget for the time since it was last used. */
static void pvdc_budget_refill(PVDCState *s, int64_t now)
{
    int64_t elapsed = now - s->crc_budget_ns;

    if (elapsed > 0) {
        int64_t refill = muldiv64(MIN(elapsed, PVDC_BUDGET_REFILL_MAX_NS),
                                  PVDC_CRC_PIXELS_PER_SECOND,
                                  NANOSECONDS_PER_SECOND);

        s->crc_budget = MIN(s->crc_budget + refill, (int64_t)PVDC_CRC_BURST);
        s->crc_budget_ns = now;
    }
}

static void pvdc_budget_charge(PVDCState *s, uint64_t cost)
{
    s->crc_budget -= (int64_t)MIN(cost, (uint64_t)INT64_MAX / 2);
}

int64_t pvdc_budget_wait(PVDCState *s, int64_t now)
{
    pvdc_budget_refill(s, now);
    if (s->crc_budget > 0) {
        return 0;
    }
    /* Rounded up: the budget is above zero once the wait is over. */
    return MIN(muldiv64(1 - s->crc_budget, NANOSECONDS_PER_SECOND,
                        PVDC_CRC_PIXELS_PER_SECOND) + 1,
               PVDC_BUDGET_REFILL_MAX_NS);
}

/*
 * Take @cost pixels from the budget.  The last capture of a burst may
 * overdraw it: one capture of any size is always possible, and pays back
 * before the next.
 */
static bool pvdc_crc_budget_take(PVDCState *s, int64_t now, uint64_t cost)
{
    if (pvdc_budget_wait(s, now)) {
        return false;
    }
    pvdc_budget_charge(s, cost);
    return true;
}

/* What composing @scene whole costs, in pixels of the budget. */
static uint64_t pvdc_scene_cost(const PVDCComposeScene *scene)
{
    /* the background, each plane, and the colour pipeline */
    unsigned int passes = scene->num_planes + 1 +
                          pvdc_compose_color_active(scene->color);

    return (uint64_t)scene->width * scene->height * passes;
}

/*
 * Compose a whole frame of @head for capture (CRC, writeback).  The first
 * composition with a colour pipeline derives its output tables: those
 * LUT evaluations, no pixels, come out of the budget too, so that a guest
 * that changes its pipeline every frame and reads the CRC pays for it in
 * captures, not in host CPU.
 */
static bool pvdc_capture_compose(PVDCHead *head,
                                 const PVDCComposeScene *scene,
                                 pixman_image_t *image)
{
    uint64_t before = pvdc_compose_color_evaluations(scene->color);
    bool composed = pvdc_console_compose(head, scene, image, NULL);

    pvdc_budget_charge(head->dev,
                       (pvdc_compose_color_evaluations(scene->color) -
                        before) * PVDC_CRC_PIXELS_PER_LUT_EVALUATION);
    return composed;
}

/* The image of @head's size to compose a whole frame into, or NULL. */
static pixman_image_t *pvdc_frame_image(PVDCHead *head,
                                        const PVDCComposeScene *scene)
{
    PVDCCapture *d = head->capture;

    if (!d->crc_image ||
        pixman_image_get_width(d->crc_image) != scene->width ||
        pixman_image_get_height(d->crc_image) != scene->height) {
        qemu_pixman_image_unref(d->crc_image);
        d->crc_image = pixman_image_create_bits(PIXMAN_x8r8g8b8, scene->width,
                                                scene->height, NULL, 0);
    }
    return d->crc_image;
}

uint32_t pvdc_crc_read(PVDCHead *head, int64_t now)
{
    PVDCState *s = head->dev;
    PVDCCapture *d = head->capture;
    PVDCComposeScene scene;
    pixman_image_t *image;
    uint64_t count;

    if (!pvdc_head_on(head) || !FIELD_EX32(head->crc_ctrl, CRC_CTRL, ENABLE)) {
        return head->crc_value;
    }
    count = pvdc_vblank_count(head, now);
    if (d->crc_captured && count == d->crc_count) {
        return head->crc_value;
    }
    pvdc_console_scene(head, &scene, -1, NULL);
    if (!pvdc_crc_budget_take(s, now, pvdc_scene_cost(&scene))) {
        trace_pvdc_crc_over_budget(head->index, count, s->crc_budget);
        return head->crc_value;
    }
    image = pvdc_frame_image(head, &scene);
    if (image && pvdc_capture_compose(head, &scene, image)) {
        head->crc_value = pvdc_compose_crc32(image);
    }
    head->crc_frame = extract64(count, 0, 32);
    d->crc_captured = true;
    d->crc_count = count;
    trace_pvdc_crc(head->index, head->crc_frame, head->crc_value);
    return head->crc_value;
}

/*
 * How pixman writes a writeback target of @fmt: as the format of the
 * same layout with alpha, so that the top byte is written opaque (into
 * an X byte pixman would write 0).
 */
static pixman_format_code_t pvdc_writeback_pixman(const PVDCComposeFormat *fmt)
{
    unsigned int i;

    for (i = 0; i < PVDC_COMPOSE_NUM_FORMATS; i++) {
        if (pvdc_compose_formats[i].color == fmt->color &&
            pvdc_compose_formats[i].alpha) {
            return pvdc_compose_formats[i].alpha;
        }
    }
    return 0;
}

void pvdc_writeback(PVDCHead *head, int64_t when)
{
    PVDCState *s = head->dev;
    const PVDCHeadRegs *r = &head->active;
    const PVDCComposeFormat *fmt = pvdc_compose_format(r->regs[R_HS_WB_FORMAT]);
    uint8_t *vram = memory_region_get_ram_ptr(&s->vram);
    PVDCComposeScene scene;
    pixman_image_t *image, *target;
    pixman_format_code_t layout;
    g_autofree uint8_t *stage = NULL;
    uint8_t *dst;
    uint32_t dst_pitch;
    uint64_t len, line;
    bool in_vram;

    /* Validated at the latch; checked again as every pointer into VRAM. */
    if (!fmt || !pvdc_writeback_target_valid(s, r)) {
        return;
    }
    layout = pvdc_writeback_pixman(fmt);
    if (!layout && !fmt->store) {
        return;
    }
    len = (uint64_t)r->regs[R_HS_WB_PITCH] *
          (FIELD_EX32(r->regs[R_HS_VTIMING], XY, X) - 1) +
          (uint64_t)FIELD_EX32(r->regs[R_HS_HTIMING], XY, X) * fmt->cpp;
    in_vram = r->regs[R_HS_WB_OFFSET] + len <= s->conf.vram_size;
    /* pvdc series: memory */
    if (!in_vram && !pvdc_memory_reachable(s)) {
        qemu_log_mask(LOG_GUEST_ERROR, "pvdc: head %u: bus mastering is "
                      "off: no writeback into guest memory at 0x%x\n",
                      head->index, r->regs[R_HS_WB_OFFSET]);
        return;
    }
    /* pvdc series: end memory */
    pvdc_console_scene(head, &scene, -1, NULL);
    pvdc_budget_refill(s, when);
    pvdc_budget_charge(s, pvdc_scene_cost(&scene));
    /*
     * Composed apart first: the target may be a framebuffer of the very
     * planes composed.
     */
    image = pvdc_frame_image(head, &scene);
    if (!image || !pvdc_capture_compose(head, &scene, image)) {
        return;
    }
    /*
     * Into VRAM in place; into a binding through a buffer of our own,
     * whose lines are then copied to the pages.
     */
    line = (uint64_t)scene.width * fmt->cpp;
    if (in_vram) {
        dst = vram + r->regs[R_HS_WB_OFFSET];
        dst_pitch = r->regs[R_HS_WB_PITCH];
    } else {
        dst_pitch = ROUND_UP(line, sizeof(uint32_t));
        stage = g_malloc((size_t)dst_pitch * scene.height);
        dst = stage;
    }
    if (fmt->store) {
        const uint32_t *frame = pixman_image_get_data(image);
        int stride = pixman_image_get_stride(image) / sizeof(uint32_t);

        for (uint32_t y = 0; y < scene.height; y++) {
            fmt->store(frame + (size_t)stride * y,
                       dst + (uint64_t)dst_pitch * y, scene.width);
        }
    } else {
        /* pixman writes only the head's width of each line, opaque. */
        target = pixman_image_create_bits(layout, scene.width, scene.height,
                                          (uint32_t *)dst, dst_pitch);
        if (!target) {
            return;
        }
        pixman_image_composite(PIXMAN_OP_SRC, image, NULL, target,
                               0, 0, 0, 0, 0, 0, scene.width, scene.height);
        pixman_image_unref(target);
    }
    if (in_vram) {
        memory_region_set_dirty(&s->vram, r->regs[R_HS_WB_OFFSET], len);
    /* pvdc series: memory */
    } else {
        pvdc_memory_store(s, r->regs[R_HS_WB_OFFSET], r->regs[R_HS_WB_PITCH],
                          scene.height, line, stage, dst_pitch);
    /* pvdc series: end memory */
    }
    trace_pvdc_writeback(head->index, head->armed_seq, r->regs[R_HS_WB_FORMAT],
                         r->regs[R_HS_WB_OFFSET], r->regs[R_HS_WB_PITCH]);
}
