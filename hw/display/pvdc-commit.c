/*
 * pvdc: paravirtual display controller - atomic commits.
 *
 * A doorbell snapshots the shadow state of a head (and of the planes bound
 * to it) into its armed state and fixes the instant it latches.  At that
 * instant the armed state of the whole group is checked against the rules
 * and becomes active all at once, or not at all.  The order of the checks
 * is part of the interface (docs/specs/pvdc.rst): the error reported for a
 * commit that breaks several rules is the first one in that order.
 *
 * Copyright (c) 2026 The pvdc authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/units.h"
#include "pvdc-internal.h"
#include "trace.h"

enum {
    PVDC_FORMAT_XRGB8888,
    PVDC_FORMAT_ARGB8888,
    PVDC_FORMAT_XBGR8888,
    PVDC_FORMAT_ABGR8888,
    PVDC_FORMAT_RGB565,
    PVDC_FORMAT_XRGB2101010,
    PVDC_FORMAT_YUYV,
    PVDC_NUM_FORMATS
};

const PVDCFormat pvdc_formats[] = {
    [PVDC_FORMAT_XRGB8888]    = { PVDC_FMT_XRGB8888, 4 },
    [PVDC_FORMAT_ARGB8888]    = { PVDC_FMT_ARGB8888, 4 },
    [PVDC_FORMAT_XBGR8888]    = { PVDC_FMT_XBGR8888, 4 },
    [PVDC_FORMAT_ABGR8888]    = { PVDC_FMT_ABGR8888, 4 },
    [PVDC_FORMAT_RGB565]      = { PVDC_FMT_RGB565, 2 },
    [PVDC_FORMAT_XRGB2101010] = { PVDC_FMT_XRGB2101010, 4 },
    [PVDC_FORMAT_YUYV]        = { PVDC_FMT_YUYV, 2 },
};
const unsigned int pvdc_num_formats = PVDC_NUM_FORMATS;
QEMU_BUILD_BUG_ON(PVDC_NUM_FORMATS > PVDC_MAX_FORMATS);

uint32_t pvdc_format_mask(unsigned int plane_type)
{
    uint32_t all = MAKE_64BIT_MASK(0, PVDC_NUM_FORMATS);

    switch (plane_type) {
    case PVDC_PLANE_TYPE_PRIMARY:
        return all & ~BIT(PVDC_FORMAT_YUYV);
    case PVDC_PLANE_TYPE_OVERLAY:
        return all;
    case PVDC_PLANE_TYPE_CURSOR:
        return BIT(PVDC_FORMAT_ARGB8888);
    default:
        g_assert_not_reached();
    }
}

static int pvdc_format_lookup(uint32_t fourcc)
{
    int i;

    for (i = 0; i < PVDC_NUM_FORMATS; i++) {
        if (pvdc_formats[i].fourcc == fourcc) {
            return i;
        }
    }
    return -1;
}

uint64_t pvdc_mode_period_ns(const PVDCHeadRegs *regs)
{
    uint64_t pixels = (uint64_t)PVDC_Y(regs->htiming) * PVDC_Y(regs->vtiming);

    if (!regs->pixel_clock) {
        return 0;
    }
    /* The clock is in kHz: one pixel lasts SCALE_MS / clock ns. */
    return pixels * SCALE_MS / regs->pixel_clock;
}

/*
 * The state a commit would leave behind: for every head and plane, the
 * armed copy if the group carries it, the active one otherwise.
 */
typedef struct PVDCCommitView {
    PVDCState *s;
    uint32_t group;
    const PVDCHeadRegs *head[PVDC_MAX_HEADS];
    const PVDCPlaneRegs *plane[PVDC_MAX_PLANES];
    int owner[PVDC_MAX_PLANES];     /* head whose commit carries it, or -1 */
} PVDCCommitView;

static void pvdc_commit_view_init(PVDCCommitView *v, PVDCState *s,
                                  uint32_t group)
{
    unsigned int h, p;

    v->s = s;
    v->group = group;
    for (h = 0; h < s->num_heads; h++) {
        v->head[h] = (group & BIT(h)) ? &s->heads[h].armed
                                      : &s->heads[h].active;
    }
    for (p = 0; p < s->num_planes; p++) {
        v->plane[p] = &s->planes[p].active;
        v->owner[p] = -1;
        for (h = 0; h < s->num_heads; h++) {
            if ((group & BIT(h)) && s->heads[h].plane_armed[p]) {
                v->plane[p] = &s->heads[h].armed_planes[p];
                v->owner[p] = h;
            }
        }
    }
}

static const char *pvdc_error_name(uint32_t result)
{
    static const char *const names[] = {
        [PVDC_ERR_MODE] = "invalid mode",
        [PVDC_ERR_MODESET_REQUIRED] = "timings changed on an enabled head",
        [PVDC_ERR_BANDWIDTH_ALLOC] = "allocation over the device total",
        [PVDC_ERR_BANDWIDTH_CHANGE] = "allocation changed on an enabled head",
        [PVDC_ERR_BANDWIDTH] = "planes need more than the allocation",
        [PVDC_ERR_HEAD_DISABLED] = "plane enabled on a disabled head",
        [PVDC_ERR_HEAD_RESERVED] = "reserved bits in HS_CTRL",
        [PVDC_ERR_PLANE_HEAD] = "plane cannot be bound to that head",
        [PVDC_ERR_PLANE_BUSY] = "plane still enabled on another head",
        [PVDC_ERR_FORMAT] = "format not accepted by the plane",
        [PVDC_ERR_FB_SIZE] = "framebuffer size",
        [PVDC_ERR_PITCH] = "pitch too small or misaligned",
        [PVDC_ERR_OFFSET_ALIGN] = "framebuffer offset misaligned",
        [PVDC_ERR_FB_BOUNDS] = "framebuffer outside VRAM",
        [PVDC_ERR_SRC_RECT] = "source rectangle",
        [PVDC_ERR_DST_RECT] = "destination rectangle",
        [PVDC_ERR_SCALE_RATIO] = "scaling beyond the limits",
        [PVDC_ERR_SCALERS] = "more scaled planes than scalers",
        [PVDC_ERR_CURSOR] = "cursor too large or scaled",
        [PVDC_ERR_ZPOS] = "zpos out of range or not unique",
        [PVDC_ERR_PLANE_CTRL] = "reserved or invalid PS_CTRL bits",
        [PVDC_ERR_GROUP] = "another head of the group was refused",
    };
    uint32_t code = result & PVDC_RESULT_CODE_MASK;

    return code < ARRAY_SIZE(names) && names[code] ? names[code] : "?";
}

static uint32_t pvdc_error(uint32_t code, unsigned int plane)
{
    return code | plane << PVDC_RESULT_PLANE_SHIFT;
}

static uint32_t pvdc_head_error(uint32_t code)
{
    return pvdc_error(code, PVDC_RESULT_PLANE_NONE);
}

static bool pvdc_plane_on(const PVDCPlaneRegs *r)
{
    return r->ctrl & PVDC_PS_CTRL_ENABLE;
}

static bool pvdc_plane_scaled(const PVDCPlaneRegs *r)
{
    return r->src_w != (uint64_t)PVDC_X(r->dst_size) << 16 ||
           r->src_h != (uint64_t)PVDC_Y(r->dst_size) << 16;
}

static bool pvdc_axis_valid(uint32_t active, uint32_t sync_start,
                            uint32_t sync_end, uint32_t total, uint32_t max)
{
    return active >= 1 && active <= max && active <= sync_start &&
           sync_start <= sync_end && sync_end <= total;
}

static bool pvdc_mode_valid(PVDCState *s, const PVDCHeadRegs *r)
{
    return pvdc_axis_valid(PVDC_X(r->htiming), PVDC_X(r->hsync),
                           PVDC_Y(r->hsync), PVDC_Y(r->htiming),
                           s->max_width) &&
           pvdc_axis_valid(PVDC_X(r->vtiming), PVDC_X(r->vsync),
                           PVDC_Y(r->vsync), PVDC_Y(r->vtiming),
                           s->max_height) &&
           r->pixel_clock >= 1 && r->pixel_clock <= PVDC_MAX_PIXEL_CLOCK_KHZ &&
           pvdc_mode_period_ns(r) >= PVDC_MIN_FRAME_PERIOD_NS;
}

static bool pvdc_timings_equal(const PVDCHeadRegs *a, const PVDCHeadRegs *b)
{
    return a->htiming == b->htiming && a->hsync == b->hsync &&
           a->vtiming == b->vtiming && a->vsync == b->vsync &&
           a->pixel_clock == b->pixel_clock;
}

static uint32_t pvdc_check_head(PVDCCommitView *v, unsigned int h)
{
    PVDCState *s = v->s;
    const PVDCHeadRegs *armed = v->head[h];
    const PVDCHeadRegs *active = &s->heads[h].active;
    bool was_on = active->ctrl & PVDC_HS_CTRL_ENABLE;
    bool on = armed->ctrl & PVDC_HS_CTRL_ENABLE;
    uint64_t allocated = 0;
    unsigned int k;

    if (armed->ctrl & ~PVDC_HS_CTRL_ENABLE) {
        return pvdc_head_error(PVDC_ERR_HEAD_RESERVED);
    }
    if (!on) {
        return 0;
    }
    if (!pvdc_mode_valid(s, armed)) {
        return pvdc_head_error(PVDC_ERR_MODE);
    }
    if (was_on && !pvdc_timings_equal(armed, active)) {
        return pvdc_head_error(PVDC_ERR_MODESET_REQUIRED);
    }
    if (was_on && armed->bandwidth != active->bandwidth) {
        return pvdc_head_error(PVDC_ERR_BANDWIDTH_CHANGE);
    }
    for (k = 0; k < s->num_heads; k++) {
        if (v->head[k]->ctrl & PVDC_HS_CTRL_ENABLE) {
            allocated += v->head[k]->bandwidth;
        }
    }
    if (allocated > s->bandwidth_total) {
        return pvdc_head_error(PVDC_ERR_BANDWIDTH_ALLOC);
    }
    return 0;
}

/* The rules on one plane carried by the commit of head @h. */
static uint32_t pvdc_check_plane_rules(PVDCCommitView *v, unsigned int h,
                                       unsigned int p)
{
    PVDCState *s = v->s;
    const PVDCPlaneRegs *r = v->plane[p];
    const PVDCPlaneRegs *active = &s->planes[p].active;
    uint32_t type = pvdc_plane_type(s, p);
    uint32_t possible = extract32(pvdc_plane_caps(s, p),
                                  PVDC_PLANE_CAPS_HEADS_SHIFT,
                                  ctpop32(PVDC_PLANE_CAPS_HEADS_MASK));
    uint32_t blend = extract32(r->ctrl, PVDC_PS_CTRL_BLEND_SHIFT,
                               ctpop32(PVDC_PS_CTRL_BLEND_MASK));
    uint32_t transforms = PVDC_PS_CTRL_ROTATE_180 | PVDC_PS_CTRL_REFLECT_X |
                          PVDC_PS_CTRL_REFLECT_Y |
                          PVDC_PS_CTRL_FILTER_BILINEAR;
    uint32_t fb_w = PVDC_X(r->fb_size), fb_h = PVDC_Y(r->fb_size);
    uint32_t dst_w = PVDC_X(r->dst_size), dst_h = PVDC_Y(r->dst_size);
    int32_t dst_x = (int16_t)PVDC_X(r->dst_pos);
    int32_t dst_y = (int16_t)PVDC_Y(r->dst_pos);
    uint64_t dst_w_fp = (uint64_t)dst_w << 16, dst_h_fp = (uint64_t)dst_h << 16;
    uint64_t line;
    int fmt;
    unsigned int q;

    if ((r->ctrl & ~PVDC_PS_CTRL_VALID_MASK) ||
        blend == PVDC_PS_CTRL_BLEND_MASK ||
        (type == PVDC_PLANE_TYPE_CURSOR && (r->ctrl & transforms))) {
        return pvdc_error(PVDC_ERR_PLANE_CTRL, p);
    }
    if (r->head >= s->num_heads || !(possible & BIT(r->head))) {
        return pvdc_error(PVDC_ERR_PLANE_HEAD, p);
    }
    if (pvdc_plane_on(active) && active->head != h) {
        return pvdc_error(PVDC_ERR_PLANE_BUSY, p);
    }
    if (!(v->head[h]->ctrl & PVDC_HS_CTRL_ENABLE)) {
        return pvdc_error(PVDC_ERR_HEAD_DISABLED, p);
    }
    fmt = pvdc_format_lookup(r->format);
    if (fmt < 0 || !(pvdc_format_mask(type) & BIT(fmt))) {
        return pvdc_error(PVDC_ERR_FORMAT, p);
    }
    if (!fb_w || !fb_h || fb_w > s->max_width || fb_h > s->max_height ||
        (fmt == PVDC_FORMAT_YUYV && (fb_w & 1))) {
        return pvdc_error(PVDC_ERR_FB_SIZE, p);
    }
    line = (uint64_t)fb_w * pvdc_formats[fmt].cpp;
    if (r->fb_pitch < line || r->fb_pitch % PVDC_PITCH_ALIGNMENT) {
        return pvdc_error(PVDC_ERR_PITCH, p);
    }
    if (r->fb_offset % PVDC_OFFSET_ALIGNMENT) {
        return pvdc_error(PVDC_ERR_OFFSET_ALIGN, p);
    }
    if ((uint64_t)r->fb_offset + (uint64_t)r->fb_pitch * (fb_h - 1) + line >
        s->vram_size) {
        return pvdc_error(PVDC_ERR_FB_BOUNDS, p);
    }
    if (!r->src_w || !r->src_h ||
        (uint64_t)r->src_x + r->src_w > (uint64_t)fb_w << 16 ||
        (uint64_t)r->src_y + r->src_h > (uint64_t)fb_h << 16) {
        return pvdc_error(PVDC_ERR_SRC_RECT, p);
    }
    if (!dst_w || !dst_h || dst_w > s->max_width || dst_h > s->max_height ||
        dst_x < -(int32_t)s->max_width || dst_x > (int32_t)s->max_width ||
        dst_y < -(int32_t)s->max_height || dst_y > (int32_t)s->max_height) {
        return pvdc_error(PVDC_ERR_DST_RECT, p);
    }
    if (type == PVDC_PLANE_TYPE_CURSOR &&
        (dst_w > PVDC_CURSOR_MAX_SIZE || dst_h > PVDC_CURSOR_MAX_SIZE ||
         pvdc_plane_scaled(r))) {
        return pvdc_error(PVDC_ERR_CURSOR, p);
    }
    if (r->src_w > PVDC_MAX_DOWNSCALE * dst_w_fp ||
        dst_w_fp > PVDC_MAX_UPSCALE * (uint64_t)r->src_w ||
        r->src_h > PVDC_MAX_DOWNSCALE * dst_h_fp ||
        dst_h_fp > PVDC_MAX_UPSCALE * (uint64_t)r->src_h) {
        return pvdc_error(PVDC_ERR_SCALE_RATIO, p);
    }
    if (r->zpos >= s->num_overlays + 2) {
        return pvdc_error(PVDC_ERR_ZPOS, p);
    }
    for (q = 0; q < s->num_planes; q++) {
        const PVDCPlaneRegs *other = v->plane[q];

        if (q != p && pvdc_plane_on(other) && other->head == h &&
            other->zpos == r->zpos) {
            return pvdc_error(PVDC_ERR_ZPOS, p);
        }
    }
    return 0;
}

static uint32_t pvdc_check_planes(PVDCCommitView *v, unsigned int h)
{
    PVDCState *s = v->s;
    bool head_on = v->head[h]->ctrl & PVDC_HS_CTRL_ENABLE;
    unsigned int p;
    uint32_t err;

    for (p = 0; p < s->num_planes; p++) {
        const PVDCPlaneRegs *r = v->plane[p];

        if (!pvdc_plane_on(r)) {
            continue;
        }
        if (v->owner[p] == h) {
            err = pvdc_check_plane_rules(v, h, p);
            if (err) {
                return err;
            }
        } else if (v->owner[p] < 0 && r->head == h && !head_on) {
            /* Left enabled on the head this commit disables. */
            return pvdc_error(PVDC_ERR_HEAD_DISABLED, p);
        }
    }
    return 0;
}

static uint32_t pvdc_check_sums(PVDCCommitView *v, unsigned int h)
{
    PVDCState *s = v->s;
    uint32_t scaled = 0;
    uint64_t needed = 0;
    unsigned int p;

    for (p = 0; p < s->num_planes; p++) {
        const PVDCPlaneRegs *r = v->plane[p];

        if (pvdc_plane_on(r) && pvdc_plane_scaled(r) &&
            ++scaled > s->num_scalers) {
            return pvdc_error(PVDC_ERR_SCALERS, p);
        }
    }
    for (p = 0; p < s->num_planes; p++) {
        const PVDCPlaneRegs *r = v->plane[p];
        int fmt = pvdc_format_lookup(r->format);

        if (!pvdc_plane_on(r) || r->head != h) {
            continue;
        }
        /* Enabled planes in the resulting state all have a valid format. */
        assert(fmt >= 0);
        needed += DIV_ROUND_UP(DIV_ROUND_UP((uint64_t)r->src_w, 1 << 16) *
                               DIV_ROUND_UP((uint64_t)r->src_h, 1 << 16) *
                               pvdc_formats[fmt].cpp, KiB);
    }
    if (needed > v->head[h]->bandwidth) {
        return pvdc_head_error(PVDC_ERR_BANDWIDTH);
    }
    return 0;
}

static uint32_t pvdc_check_commit(PVDCCommitView *v, unsigned int *failed)
{
    unsigned int h;
    uint32_t err;

    for (h = 0; h < v->s->num_heads; h++) {
        if (!(v->group & BIT(h))) {
            continue;
        }
        err = pvdc_check_head(v, h);
        if (!err) {
            err = pvdc_check_planes(v, h);
        }
        if (!err) {
            err = pvdc_check_sums(v, h);
        }
        if (err) {
            *failed = h;
            return err;
        }
    }
    return 0;
}

static void pvdc_apply_commit(PVDCCommitView *v, int64_t when)
{
    PVDCState *s = v->s;
    unsigned int h, p;

    for (p = 0; p < s->num_planes; p++) {
        PVDCPlaneRegs *active = &s->planes[p].active;

        if (v->owner[p] < 0) {
            continue;
        }
        if (active->head != v->owner[p] && active->head < s->num_heads) {
            pvdc_compose_invalidate(&s->heads[active->head]);
        }
        *active = *v->plane[p];
    }
    for (h = 0; h < s->num_heads; h++) {
        PVDCHead *head = &s->heads[h];
        bool was_on = head->active.ctrl & PVDC_HS_CTRL_ENABLE;
        bool on = head->armed.ctrl & PVDC_HS_CTRL_ENABLE;

        if (!(v->group & BIT(h))) {
            continue;
        }
        if (was_on && !on) {
            pvdc_timeline_disable(head, when);
        }
        head->active = head->armed;
        if (!was_on && on) {
            pvdc_timeline_enable(head, when);
        }
        pvdc_compose_invalidate(head);
    }
}

static void pvdc_latch_group(PVDCState *s, uint32_t group, int64_t when)
{
    PVDCCommitView view;
    unsigned int failed = 0;
    uint32_t err;
    unsigned int h;

    pvdc_commit_view_init(&view, s, group);
    err = pvdc_check_commit(&view, &failed);
    if (!err) {
        pvdc_apply_commit(&view, when);
    } else {
        uint32_t plane = extract32(err, PVDC_RESULT_PLANE_SHIFT,
                                   ctpop32(PVDC_RESULT_PLANE_MASK));
        char where[32] = "";

        if (plane != PVDC_RESULT_PLANE_NONE) {
            snprintf(where, sizeof(where), " (plane %u)", plane);
        }
        qemu_log_mask(LOG_GUEST_ERROR, "pvdc: head %u: commit %u refused: "
                      "%s%s\n", failed, s->heads[failed].armed_seq,
                      pvdc_error_name(err), where);
    }

    for (h = 0; h < s->num_heads; h++) {
        PVDCHead *head = &s->heads[h];

        if (!(group & BIT(h))) {
            continue;
        }
        head->is_armed = false;
        head->done_seq = head->armed_seq;
        if (!err) {
            head->result = PVDC_RESULT_APPLIED;
            s->commits_applied++;
        } else if (h == failed) {
            head->result = err;
        } else {
            head->result = pvdc_head_error(PVDC_ERR_GROUP);
        }
        if (err) {
            s->commits_rejected++;
        }
        trace_pvdc_commit_latched(h, head->done_seq, head->result, when);
    }
    /* Interrupts last, once the outcome is complete for every member. */
    for (h = 0; h < s->num_heads; h++) {
        if (group & BIT(h)) {
            pvdc_irq_raise(s, h, err ? PVDC_INT_COMMIT_REJECTED
                                     : PVDC_INT_COMMIT_DONE);
        }
    }
}

void pvdc_latch_due_commits(PVDCState *s, int64_t now)
{
    /* Each round disarms at least one head, so this ends. */
    for (;;) {
        PVDCHead *first = NULL;
        unsigned int h;

        for (h = 0; h < s->num_heads; h++) {
            PVDCHead *head = &s->heads[h];

            if (head->is_armed && head->latch_ns <= now &&
                (!first || head->latch_ns < first->latch_ns)) {
                first = head;
            }
        }
        if (!first) {
            return;
        }
        pvdc_latch_group(s, first->group, first->latch_ns);
    }
}

bool pvdc_next_latch(PVDCState *s, int64_t *deadline)
{
    bool found = false;
    unsigned int h;

    for (h = 0; h < s->num_heads; h++) {
        if (s->heads[h].is_armed) {
            *deadline = MIN(*deadline, s->heads[h].latch_ns);
            found = true;
        }
    }
    return found;
}

uint32_t pvdc_armed_mask(PVDCState *s)
{
    uint32_t mask = 0;
    unsigned int h;

    for (h = 0; h < s->num_heads; h++) {
        if (s->heads[h].is_armed) {
            mask |= BIT(h);
        }
    }
    return mask;
}

/* Take the shadow state of head @h and of the planes bound to it. */
static void pvdc_snapshot_head(PVDCState *s, unsigned int h)
{
    PVDCHead *head = &s->heads[h];
    unsigned int p;

    head->armed = head->shadow;
    for (p = 0; p < s->num_planes; p++) {
        head->plane_armed[p] = s->planes[p].shadow.head == h;
        if (head->plane_armed[p]) {
            head->armed_planes[p] = s->planes[p].shadow;
        }
    }
    head->armed_seq++;
}

static int64_t pvdc_arm_head(PVDCState *s, unsigned int h, int64_t now)
{
    PVDCHead *head = &s->heads[h];

    pvdc_snapshot_head(s, h);
    head->is_armed = true;
    trace_pvdc_commit_armed(h, head->armed_seq);

    if (head->active.ctrl & PVDC_HS_CTRL_ENABLE) {
        return pvdc_next_vblank(head, now);
    }
    if (head->armed.ctrl & PVDC_HS_CTRL_ENABLE) {
        return now + (int64_t)s->link_up_delay_ms * SCALE_MS;
    }
    return now;
}

/*
 * The timer may run late: a commit whose latch point has passed is latched
 * before a doorbell is looked at, as if the timer had been on time.
 */
static int64_t pvdc_catch_up(PVDCState *s)
{
    int64_t now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);

    pvdc_latch_due_commits(s, now);
    return now;
}

void pvdc_doorbell(PVDCState *s, uint32_t mask)
{
    int64_t now = pvdc_catch_up(s);
    uint32_t busy = mask & pvdc_armed_mask(s);
    int64_t latch = now;
    unsigned int h;

    if (busy) {
        for (h = 0; h < s->num_heads; h++) {
            if (busy & BIT(h)) {
                s->heads[h].status |= PVDC_HEAD_STATUS_DOORBELL_OVERRUN;
            }
        }
        qemu_log_mask(LOG_GUEST_ERROR, "pvdc: doorbell for heads 0x%x "
                      "ignored: heads 0x%x already have a commit armed\n",
                      mask, busy);
        trace_pvdc_doorbell_overrun(mask, busy);
        pvdc_timer_update(s);
        return;
    }

    for (h = 0; h < s->num_heads; h++) {
        if (mask & BIT(h)) {
            latch = MAX(latch, pvdc_arm_head(s, h, now));
        }
    }
    for (h = 0; h < s->num_heads; h++) {
        if (mask & BIT(h)) {
            s->heads[h].group = mask;
            s->heads[h].latch_ns = latch;
        }
    }
    trace_pvdc_doorbell(mask, latch);
    pvdc_timer_update(s);
}

/*
 * The armed commit of @h takes the shadow state again, keeping its latch
 * point and group: updates made while a commit waits for its vblank join
 * it instead of waiting for the next one.
 */
void pvdc_doorbell_amend(PVDCState *s, unsigned int h)
{
    PVDCHead *head = &s->heads[h];

    pvdc_catch_up(s);
    if (!head->is_armed) {
        pvdc_doorbell(s, BIT(h));
        return;
    }
    pvdc_snapshot_head(s, h);
    trace_pvdc_commit_amended(h, head->armed_seq, head->latch_ns);
    pvdc_timer_update(s);
}
