/*
 * pvdc: paravirtual display controller - the commit rules.
 *
 * At its latch point the armed state of a whole group is checked against
 * these rules (pvdc-latch.c) and becomes active all at once, or not at all.
 * The order of the checks is part of the interface (docs/specs/pvdc.rst):
 * the error reported for a commit that breaks several rules is the first
 * one in that order.
 *
 * The same rules check a state loaded from a migration stream: no state
 * becomes active that a commit would not accept.
 *
 * Copyright (c) 2026 The pvdc authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/units.h"
#include "qapi/error.h"
#include "pvdc-compose.h"
#include "pvdc-internal.h"

QEMU_BUILD_BUG_ON(PVDC_COMPOSE_NUM_FORMATS > PVDC_MAX_FORMATS);

/* The FORMAT_TABLE index of @fourcc, or -1. */
static int pvdc_format_index(uint32_t fourcc)
{
    const PVDCComposeFormat *fmt = pvdc_compose_format(fourcc);

    return fmt ? fmt - pvdc_compose_formats : -1;
}

uint32_t pvdc_format_mask(unsigned int plane_type)
{
    uint32_t all = MAKE_64BIT_MASK(0, PVDC_COMPOSE_NUM_FORMATS);
    uint32_t rgb = 0;
    unsigned int i;

    switch (plane_type) {
    case PVDC_PLANE_TYPE_PRIMARY:
        /* YCbCr (video) is for overlays */
        for (i = 0; i < PVDC_COMPOSE_NUM_FORMATS; i++) {
            if (!pvdc_compose_formats[i].yuv_depth) {
                rgb |= BIT(i);
            }
        }
        return rgb;
    case PVDC_PLANE_TYPE_OVERLAY:
        return all;
    case PVDC_PLANE_TYPE_CURSOR:
        return BIT(pvdc_format_index(PVDC_FMT_ARGB8888));
    default:
        g_assert_not_reached();
    }
}

uint32_t pvdc_writeback_format_mask(void)
{
    /*
     * 8 bits a channel in 32-bit pixels: the composed frame, unrounded;
     * 10 bits a channel: the same, widened as the planes read it back.
     */
    static const uint32_t fourccs[] = {
        PVDC_FMT_XRGB8888, PVDC_FMT_ARGB8888, PVDC_FMT_XBGR8888,
        PVDC_FMT_ABGR8888, PVDC_FMT_XRGB2101010,
    };
    uint32_t mask = 0;
    unsigned int i;

    for (i = 0; i < ARRAY_SIZE(fourccs); i++) {
        mask |= BIT(pvdc_format_index(fourccs[i]));
    }
    return mask;
}

uint64_t pvdc_mode_period_ns(const PVDCHeadRegs *regs)
{
    uint64_t pixels = (uint64_t)FIELD_EX32(regs->regs[R_HS_HTIMING], XY, Y) *
                      FIELD_EX32(regs->regs[R_HS_VTIMING], XY, Y);

    if (!regs->regs[R_HS_PIXEL_CLOCK]) {
        return 0;
    }
    /* The clock is in kHz: one pixel lasts SCALE_MS / clock ns. */
    return pixels * SCALE_MS / regs->regs[R_HS_PIXEL_CLOCK];
}

void pvdc_commit_view_init(PVDCCommitView *v, PVDCState *s, uint32_t group)
{
    unsigned int h, p;

    v->s = s;
    v->group = group;
    for (h = 0; h < s->conf.num_heads; h++) {
        v->head[h] = (group & BIT(h)) ? &s->heads[h].armed
                                      : &s->heads[h].active;
    }
    for (p = 0; p < s->num_planes; p++) {
        v->plane[p] = &s->planes[p].active;
        v->owner[p] = -1;
        for (h = 0; h < s->conf.num_heads; h++) {
            if ((group & BIT(h)) && s->heads[h].plane_armed[p]) {
                v->plane[p] = &s->heads[h].armed_planes[p];
                v->owner[p] = h;
            }
        }
    }
}

const char *pvdc_error_name(uint32_t result)
{
    static const char *const names[] = {
        [PVDC_ERR_MODE] = "invalid mode",
        [PVDC_ERR_MODESET_REQUIRED] = "timings or connector changed on an "
                                      "enabled head",
        [PVDC_ERR_BANDWIDTH_ALLOC] = "allocation over the device total",
        [PVDC_ERR_BANDWIDTH_CHANGE] = "allocation changed on an enabled head",
        [PVDC_ERR_BANDWIDTH] = "planes need more than the allocation",
        [PVDC_ERR_HEAD_DISABLED] = "plane enabled on a disabled head",
        [PVDC_ERR_HEAD_RESERVED] = "reserved bits in HS_CTRL",
        [PVDC_ERR_COLOR] = "LUT size out of range, or a LUT or the CTM "
                           "misaligned or outside VRAM",
        [PVDC_ERR_WRITEBACK] = "writeback on a disabled head, or its format, "
                               "pitch, alignment or VRAM range",
        [PVDC_ERR_CONNECTOR] = "connector out of range or driven by another "
                               "head",
        [PVDC_ERR_PLANE_HEAD] = "plane cannot be bound to that head",
        [PVDC_ERR_PLANE_BUSY] = "plane shown by a head outside the commit",
        [PVDC_ERR_FORMAT] = "format not accepted by the plane",
        [PVDC_ERR_FB_SIZE] = "framebuffer size",
        [PVDC_ERR_PITCH] = "pitch too small, misaligned or too long",
        [PVDC_ERR_OFFSET_ALIGN] = "framebuffer offset misaligned",
        [PVDC_ERR_FB_BOUNDS] = "framebuffer outside VRAM",
        [PVDC_ERR_SRC_RECT] = "source rectangle",
        [PVDC_ERR_DST_RECT] = "destination rectangle",
        [PVDC_ERR_SCALE_RATIO] = "scaling beyond the limits",
        [PVDC_ERR_SCALERS] = "more scaled planes than scalers",
        [PVDC_ERR_CURSOR] = "cursor too large or scaled",
        [PVDC_ERR_ZPOS] = "zpos out of range or not unique",
        [PVDC_ERR_PLANE_CTRL] = "reserved or invalid PS_CTRL bits",
        [PVDC_ERR_CHROMA] = "Cb:Cr plane misaligned, too narrow or outside "
                            "VRAM",
        [PVDC_ERR_GROUP] = "another head of the group was refused",
    };
    uint32_t code = FIELD_EX32(result, RESULT, CODE);

    return code < ARRAY_SIZE(names) && names[code] ? names[code] : "?";
}

/* " (plane N)" for an error about a plane, "" for one about the head. */
void pvdc_error_where(uint32_t result, char *buf, size_t size)
{
    uint32_t plane = FIELD_EX32(result, RESULT, PLANE);

    buf[0] = 0;
    if (plane != PVDC_RESULT_PLANE_NONE) {
        snprintf(buf, size, " (plane %u)", plane);
    }
}

static uint32_t pvdc_error(uint32_t code, unsigned int plane)
{
    uint32_t result = FIELD_DP32(0, RESULT, CODE, code);

    return FIELD_DP32(result, RESULT, PLANE, plane);
}

uint32_t pvdc_head_error(uint32_t code)
{
    return pvdc_error(code, PVDC_RESULT_PLANE_NONE);
}

static bool pvdc_in_group(uint32_t group, uint32_t head)
{
    return head < PVDC_MAX_HEADS && (group & BIT(head));
}

static bool pvdc_plane_scaled(const PVDCPlaneRegs *r)
{
    uint32_t dst_size = r->regs[R_PS_DST_SIZE];

    return r->regs[R_PS_SRC_W] != (uint64_t)FIELD_EX32(dst_size, XY, X) << 16 ||
           r->regs[R_PS_SRC_H] != (uint64_t)FIELD_EX32(dst_size, XY, Y) << 16;
}

/*
 * Half-bytes per pixel of an enabled plane of a validated state: the Y
 * (or only) plane, and for two-plane formats a Cb:Cr sample per 2x2
 * pixels (NV12 1.5 bytes a pixel, P010 3).
 */
static unsigned int pvdc_plane_half_bytes(const PVDCPlaneRegs *r)
{
    const PVDCComposeFormat *fmt = pvdc_compose_format(r->regs[R_PS_FORMAT]);

    /* Validation made this impossible; count the widest if it happened. */
    if (!fmt) {
        return 2 * 4;
    }
    return 2 * fmt->cpp + fmt->chroma_cpp / 2;
}

static bool pvdc_axis_valid(uint32_t timing, uint32_t sync, uint32_t max)
{
    uint32_t active = FIELD_EX32(timing, XY, X);
    uint32_t total = FIELD_EX32(timing, XY, Y);
    uint32_t sync_start = FIELD_EX32(sync, XY, X);
    uint32_t sync_end = FIELD_EX32(sync, XY, Y);

    return active >= 1 && active <= max && active <= sync_start &&
           sync_start <= sync_end && sync_end <= total;
}

bool pvdc_mode_valid(PVDCState *s, const PVDCHeadRegs *r)
{
    return pvdc_axis_valid(r->regs[R_HS_HTIMING], r->regs[R_HS_HSYNC],
                           s->conf.max_width) &&
           pvdc_axis_valid(r->regs[R_HS_VTIMING], r->regs[R_HS_VSYNC],
                           s->conf.max_height) &&
           r->regs[R_HS_PIXEL_CLOCK] >= 1 &&
           r->regs[R_HS_PIXEL_CLOCK] <= PVDC_MAX_PIXEL_CLOCK_KHZ &&
           pvdc_mode_period_ns(r) >= PVDC_MIN_FRAME_PERIOD_NS;
}

/* The registers that change only with a modeset: timings and route. */
static bool pvdc_mode_equal(const PVDCHeadRegs *a, const PVDCHeadRegs *b)
{
    static const unsigned int mode[] = {
        R_HS_HTIMING, R_HS_HSYNC, R_HS_VTIMING, R_HS_VSYNC, R_HS_PIXEL_CLOCK,
        R_HS_CONNECTOR,
    };
    unsigned int i;

    for (i = 0; i < ARRAY_SIZE(mode); i++) {
        if (a->regs[mode[i]] != b->regs[mode[i]]) {
            return false;
        }
    }
    return true;
}

/*
 * The connector head @h drives in the state the commit leaves exists and
 * no other head enabled in that state drives it.
 */
static bool pvdc_connector_free(PVDCCommitView *v, unsigned int h)
{
    uint32_t connector = v->head[h]->regs[R_HS_CONNECTOR];
    unsigned int k;

    if (connector >= v->s->conf.num_heads) {
        return false;
    }
    for (k = 0; k < v->s->conf.num_heads; k++) {
        if (k != h &&
            FIELD_EX32(v->head[k]->regs[R_HS_CTRL], HS_CTRL, ENABLE) &&
            v->head[k]->regs[R_HS_CONNECTOR] == connector) {
            return false;
        }
    }
    return true;
}

/*
 * @lines lines (at least one) of @line bytes, @pitch bytes apart from
 * @offset on, end inside VRAM: computed in 64 bits, no sum wraps.
 */
static bool pvdc_lines_in_vram(PVDCState *s, uint32_t offset, uint32_t pitch,
                               uint64_t lines, uint64_t line)
{
    return (uint64_t)offset + (uint64_t)pitch * (lines - 1) + line <=
           s->conf.vram_size;
}

/*
 * The same lines wholly in VRAM or wholly in one binding: where a plane
 * may read (PVDC_ERR_FB_BOUNDS, PVDC_ERR_CHROMA).
 */
static bool pvdc_lines_in_memory(PVDCState *s, uint32_t offset,
                                 uint32_t pitch, uint64_t lines,
                                 uint64_t line)
{
    /* pvdc series: memory */
    if (pvdc_memory_bound(s, offset, (uint64_t)pitch * (lines - 1) + line)) {
        return true;
    }
    /* pvdc series: end memory */
    return pvdc_lines_in_vram(s, offset, pitch, lines, line);
}

/* pvdc series: color */
/*
 * A table or matrix of @len bytes at device address @offset: aligned and
 * wholly inside VRAM or wholly in one binding, computed in 64 bits.
 */
static bool pvdc_color_span_valid(PVDCState *s, uint32_t offset, uint64_t len)
{
    if (offset % PVDC_COLOR_ALIGN) {
        return false;
    }
    /* pvdc series: memory */
    if (pvdc_memory_bound(s, offset, len)) {
        return true;
    }
    /* pvdc series: end memory */
    return (uint64_t)offset + len <= s->conf.vram_size;
}

static bool pvdc_lut_valid(PVDCState *s, uint32_t offset, uint32_t size)
{
    return size >= PVDC_LUT_MIN_SIZE && size <= PVDC_LUT_MAX_SIZE &&
           pvdc_color_span_valid(s, offset,
                                 (uint64_t)size * PVDC_LUT_ENTRY_SIZE);
}

/* The registers of the colour stages @r enables (PVDC_ERR_COLOR). */
bool pvdc_color_valid(PVDCState *s, const PVDCHeadRegs *r)
{
    if (FIELD_EX32(r->regs[R_HS_CTRL], HS_CTRL, DEGAMMA) &&
        !pvdc_lut_valid(s, r->regs[R_HS_DEGAMMA_LUT],
                        FIELD_EX32(r->regs[R_HS_LUT_SIZES], XY, X))) {
        return false;
    }
    if (FIELD_EX32(r->regs[R_HS_CTRL], HS_CTRL, CTM) &&
        !pvdc_color_span_valid(s, r->regs[R_HS_CTM], PVDC_CTM_SIZE)) {
        return false;
    }
    if (FIELD_EX32(r->regs[R_HS_CTRL], HS_CTRL, GAMMA) &&
        !pvdc_lut_valid(s, r->regs[R_HS_GAMMA_LUT],
                        FIELD_EX32(r->regs[R_HS_LUT_SIZES], XY, Y))) {
        return false;
    }
    return true;
}

/* pvdc series: end color */
/*
 * A pitch of @lines lines of @line bytes: it holds a line, it is aligned,
 * and every line starts within PVDC_FB_SPAN_MAX bytes of the first.
 */
static bool pvdc_pitch_valid(uint32_t pitch, uint32_t lines, uint64_t line)
{
    return pitch >= line && !(pitch % PVDC_PITCH_ALIGNMENT) &&
           (uint64_t)pitch * lines <= PVDC_FB_SPAN_MAX;
}

bool pvdc_writeback_target_valid(PVDCState *s, const PVDCHeadRegs *r)
{
    int fmt = pvdc_format_index(r->regs[R_HS_WB_FORMAT]);
    uint32_t height = FIELD_EX32(r->regs[R_HS_VTIMING], XY, X);
    uint64_t line;

    if (fmt < 0 || !(pvdc_writeback_format_mask() & BIT(fmt)) || !height) {
        return false;
    }
    line = (uint64_t)FIELD_EX32(r->regs[R_HS_HTIMING], XY, X) *
           pvdc_compose_formats[fmt].cpp;
    return !(r->regs[R_HS_WB_OFFSET] % PVDC_OFFSET_ALIGNMENT) &&
           pvdc_pitch_valid(r->regs[R_HS_WB_PITCH], height, line) &&
           pvdc_lines_in_memory(s, r->regs[R_HS_WB_OFFSET],
                                r->regs[R_HS_WB_PITCH], height, line);
}

static uint32_t pvdc_check_head(PVDCCommitView *v, unsigned int h)
{
    PVDCState *s = v->s;
    const PVDCHeadRegs *armed = v->head[h];
    const PVDCHeadRegs *active = &s->heads[h].active;
    bool was_on = FIELD_EX32(active->regs[R_HS_CTRL], HS_CTRL, ENABLE);
    uint64_t allocated = 0;
    unsigned int k;

    if (armed->regs[R_HS_CTRL] & ~PVDC_HS_CTRL_VALID_MASK) {
        return pvdc_head_error(PVDC_ERR_HEAD_RESERVED);
    }
    if (!FIELD_EX32(armed->regs[R_HS_CTRL], HS_CTRL, ENABLE)) {
        /* Unlike colour stages, writeback asks for a frame there is not. */
        return FIELD_EX32(armed->regs[R_HS_CTRL], HS_CTRL, WRITEBACK) ?
               pvdc_head_error(PVDC_ERR_WRITEBACK) : 0;
    }
    if (!pvdc_mode_valid(s, armed)) {
        return pvdc_head_error(PVDC_ERR_MODE);
    }
    if (!pvdc_connector_free(v, h)) {
        return pvdc_head_error(PVDC_ERR_CONNECTOR);
    }
    if (was_on && !pvdc_mode_equal(armed, active)) {
        return pvdc_head_error(PVDC_ERR_MODESET_REQUIRED);
    }
    if (was_on && armed->regs[R_HS_BANDWIDTH] != active->regs[R_HS_BANDWIDTH]) {
        return pvdc_head_error(PVDC_ERR_BANDWIDTH_CHANGE);
    }
    for (k = 0; k < s->conf.num_heads; k++) {
        if (FIELD_EX32(v->head[k]->regs[R_HS_CTRL], HS_CTRL, ENABLE)) {
            allocated += v->head[k]->regs[R_HS_BANDWIDTH];
        }
    }
    if (allocated > s->conf.bandwidth_total) {
        return pvdc_head_error(PVDC_ERR_BANDWIDTH_ALLOC);
    }
    /* pvdc series: color */
    /* Not a modeset: the pipeline may change on an enabled head. */
    if (!pvdc_color_valid(s, armed)) {
        return pvdc_head_error(PVDC_ERR_COLOR);
    }
    /* pvdc series: end color */
    if (FIELD_EX32(armed->regs[R_HS_CTRL], HS_CTRL, WRITEBACK) &&
        !pvdc_writeback_target_valid(s, armed)) {
        return pvdc_head_error(PVDC_ERR_WRITEBACK);
    }
    return 0;
}

/*
 * A plane the commit carries may not be taken from a head outside the
 * group that shows it, whatever the commit does with it: the state of a
 * head only ever changes at a latch point of its own.
 */
static bool pvdc_plane_busy(PVDCCommitView *v, unsigned int p)
{
    const PVDCPlaneRegs *active = &v->s->planes[p].active;

    return pvdc_plane_on(active) &&
           !pvdc_in_group(v->group, active->regs[R_PS_HEAD]);
}

/* Where the enabled plane @p carried by head @h may be shown. */
static uint32_t pvdc_check_plane_binding(PVDCCommitView *v, unsigned int h,
                                         unsigned int p)
{
    PVDCState *s = v->s;
    const PVDCPlaneRegs *r = v->plane[p];
    uint32_t type = pvdc_plane_type(s, p);
    uint32_t possible = FIELD_EX32(pvdc_plane_caps(s, p), PLANE_CAPS, HEADS);
    uint32_t transforms = PVDC_PS_CTRL_ROTATE_180 | PVDC_PS_CTRL_REFLECT_X |
                          PVDC_PS_CTRL_REFLECT_Y |
                          PVDC_PS_CTRL_FILTER_BILINEAR;
    uint32_t encoding = FIELD_EX32(r->regs[R_PS_CTRL], PS_CTRL, COLOR_ENCODING);

    /* The encoding is checked for every format, used by YCbCr ones. */
    if ((r->regs[R_PS_CTRL] & ~PVDC_PS_CTRL_VALID_MASK) ||
        FIELD_EX32(r->regs[R_PS_CTRL], PS_CTRL, BLEND) ==
        PVDC_PS_CTRL_BLEND_MASK ||
        encoding > PVDC_COLOR_BT2020 ||
        (type == PVDC_PLANE_TYPE_CURSOR && (r->regs[R_PS_CTRL] & transforms))) {
        return pvdc_error(PVDC_ERR_PLANE_CTRL, p);
    }
    if (!pvdc_in_group(possible, r->regs[R_PS_HEAD])) {
        return pvdc_error(PVDC_ERR_PLANE_HEAD, p);
    }
    if (pvdc_plane_busy(v, p)) {
        return pvdc_error(PVDC_ERR_PLANE_BUSY, p);
    }
    if (!FIELD_EX32(v->head[h]->regs[R_HS_CTRL], HS_CTRL, ENABLE)) {
        return pvdc_error(PVDC_ERR_HEAD_DISABLED, p);
    }
    return 0;
}

/*
 * The Cb:Cr plane of a two-plane format @fmt, @fb_w x @fb_h pixels: a
 * sample of @fmt->chroma_cpp bytes per 2x2 pixels, rounded up, laid out
 * and checked like a framebuffer of its own.
 */
static bool pvdc_chroma_valid(PVDCState *s, const PVDCPlaneRegs *r,
                              const PVDCComposeFormat *fmt, uint32_t fb_w,
                              uint32_t fb_h)
{
    uint64_t line = (uint64_t)DIV_ROUND_UP(fb_w, 2) * fmt->chroma_cpp;
    uint64_t lines = DIV_ROUND_UP(fb_h, 2);

    return !(r->regs[R_PS_CHROMA_OFFSET] % PVDC_OFFSET_ALIGNMENT) &&
           pvdc_pitch_valid(r->regs[R_PS_CHROMA_PITCH], lines, line) &&
           pvdc_lines_in_memory(s, r->regs[R_PS_CHROMA_OFFSET],
                                r->regs[R_PS_CHROMA_PITCH], lines, line);
}

/* The framebuffer of plane @p: format, size, layout, inside VRAM. */
static uint32_t pvdc_check_plane_fb(PVDCCommitView *v, unsigned int p)
{
    PVDCState *s = v->s;
    const PVDCPlaneRegs *r = v->plane[p];
    uint32_t fb_w = FIELD_EX32(r->regs[R_PS_FB_SIZE], XY, X);
    uint32_t fb_h = FIELD_EX32(r->regs[R_PS_FB_SIZE], XY, Y);
    int fmt = pvdc_format_index(r->regs[R_PS_FORMAT]);
    uint64_t line;

    if (fmt < 0 || !(pvdc_format_mask(pvdc_plane_type(s, p)) & BIT(fmt))) {
        return pvdc_error(PVDC_ERR_FORMAT, p);
    }
    if (!fb_w || !fb_h || fb_w > s->conf.max_width ||
        fb_h > s->conf.max_height ||
        (r->regs[R_PS_FORMAT] == PVDC_FMT_YUYV && (fb_w & 1))) {
        return pvdc_error(PVDC_ERR_FB_SIZE, p);
    }
    line = (uint64_t)fb_w * pvdc_compose_formats[fmt].cpp;
    if (!pvdc_pitch_valid(r->regs[R_PS_FB_PITCH], fb_h, line)) {
        return pvdc_error(PVDC_ERR_PITCH, p);
    }
    if (r->regs[R_PS_FB_OFFSET] % PVDC_OFFSET_ALIGNMENT) {
        return pvdc_error(PVDC_ERR_OFFSET_ALIGN, p);
    }
    if (!pvdc_lines_in_memory(s, r->regs[R_PS_FB_OFFSET],
                              r->regs[R_PS_FB_PITCH], fb_h, line)) {
        return pvdc_error(PVDC_ERR_FB_BOUNDS, p);
    }
    if (pvdc_compose_formats[fmt].chroma_cpp &&
        !pvdc_chroma_valid(s, r, &pvdc_compose_formats[fmt], fb_w, fb_h)) {
        return pvdc_error(PVDC_ERR_CHROMA, p);
    }
    return 0;
}

/* The source and destination rectangles of plane @p, and its scaling. */
static uint32_t pvdc_check_plane_geometry(PVDCCommitView *v, unsigned int p)
{
    PVDCState *s = v->s;
    const PVDCPlaneRegs *r = v->plane[p];
    uint64_t fb_w = FIELD_EX32(r->regs[R_PS_FB_SIZE], XY, X);
    uint64_t fb_h = FIELD_EX32(r->regs[R_PS_FB_SIZE], XY, Y);
    int32_t dst_w = FIELD_EX32(r->regs[R_PS_DST_SIZE], XY, X);
    int32_t dst_h = FIELD_EX32(r->regs[R_PS_DST_SIZE], XY, Y);
    int32_t dst_x = (int16_t)FIELD_EX32(r->regs[R_PS_DST_POS], XY, X);
    int32_t dst_y = (int16_t)FIELD_EX32(r->regs[R_PS_DST_POS], XY, Y);
    uint64_t dst_w_fp = (uint64_t)dst_w << 16, dst_h_fp = (uint64_t)dst_h << 16;
    int32_t max_w = s->conf.max_width, max_h = s->conf.max_height;

    if (!r->regs[R_PS_SRC_W] || !r->regs[R_PS_SRC_H] ||
        (uint64_t)r->regs[R_PS_SRC_X] + r->regs[R_PS_SRC_W] > fb_w << 16 ||
        (uint64_t)r->regs[R_PS_SRC_Y] + r->regs[R_PS_SRC_H] > fb_h << 16) {
        return pvdc_error(PVDC_ERR_SRC_RECT, p);
    }
    if (!dst_w || !dst_h || dst_w > max_w || dst_h > max_h ||
        dst_x < -max_w || dst_x > max_w || dst_y < -max_h || dst_y > max_h) {
        return pvdc_error(PVDC_ERR_DST_RECT, p);
    }
    if (pvdc_plane_type(s, p) == PVDC_PLANE_TYPE_CURSOR &&
        (dst_w > PVDC_CURSOR_MAX_SIZE || dst_h > PVDC_CURSOR_MAX_SIZE ||
         pvdc_plane_scaled(r))) {
        return pvdc_error(PVDC_ERR_CURSOR, p);
    }
    /*
     * Upscaling has no limit (SCALE_LIMITS says 0): composition costs
     * what the destination does, whatever the ratio.
     */
    if (r->regs[R_PS_SRC_W] > PVDC_MAX_DOWNSCALE * dst_w_fp ||
        r->regs[R_PS_SRC_H] > PVDC_MAX_DOWNSCALE * dst_h_fp) {
        return pvdc_error(PVDC_ERR_SCALE_RATIO, p);
    }
    return 0;
}

/* Plane @p has a stacking position of its own on head @h. */
static uint32_t pvdc_check_plane_zpos(PVDCCommitView *v, unsigned int h,
                                      unsigned int p)
{
    PVDCState *s = v->s;
    const PVDCPlaneRegs *r = v->plane[p];
    unsigned int q;

    if (r->regs[R_PS_ZPOS] >= s->conf.num_overlays + 2) {
        return pvdc_error(PVDC_ERR_ZPOS, p);
    }
    for (q = 0; q < s->num_planes; q++) {
        const PVDCPlaneRegs *other = v->plane[q];

        if (q != p && pvdc_plane_on(other) && other->regs[R_PS_HEAD] == h &&
            other->regs[R_PS_ZPOS] == r->regs[R_PS_ZPOS]) {
            return pvdc_error(PVDC_ERR_ZPOS, p);
        }
    }
    return 0;
}

/* The rules on one enabled plane carried by the commit of head @h. */
static uint32_t pvdc_check_plane_rules(PVDCCommitView *v, unsigned int h,
                                       unsigned int p)
{
    uint32_t err;

    err = pvdc_check_plane_binding(v, h, p);
    if (!err) {
        err = pvdc_check_plane_fb(v, p);
    }
    if (!err) {
        err = pvdc_check_plane_geometry(v, p);
    }
    if (!err) {
        err = pvdc_check_plane_zpos(v, h, p);
    }
    return err;
}

static uint32_t pvdc_check_planes(PVDCCommitView *v, unsigned int h)
{
    PVDCState *s = v->s;
    bool head_on = FIELD_EX32(v->head[h]->regs[R_HS_CTRL], HS_CTRL, ENABLE);
    unsigned int p;
    uint32_t err;

    for (p = 0; p < s->num_planes; p++) {
        const PVDCPlaneRegs *r = v->plane[p];

        if (v->owner[p] == h) {
            if (pvdc_plane_on(r)) {
                err = pvdc_check_plane_rules(v, h, p);
            } else {
                /* Disabling or moving it would change another head too. */
                err = pvdc_plane_busy(v, p) ?
                      pvdc_error(PVDC_ERR_PLANE_BUSY, p) : 0;
            }
            if (err) {
                return err;
            }
        } else if (v->owner[p] < 0 && pvdc_plane_on(r) &&
                   r->regs[R_PS_HEAD] == h && !head_on) {
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
            ++scaled > s->conf.num_scalers) {
            return pvdc_error(PVDC_ERR_SCALERS, p);
        }
    }
    for (p = 0; p < s->num_planes; p++) {
        const PVDCPlaneRegs *r = v->plane[p];

        if (!pvdc_plane_on(r) || r->regs[R_PS_HEAD] != h) {
            continue;
        }
        /* at most 2^16 * 2^16 * 8 half-bytes: no overflow */
        needed += DIV_ROUND_UP(DIV_ROUND_UP((uint64_t)r->regs[R_PS_SRC_W],
                                            1 << 16) *
                               DIV_ROUND_UP((uint64_t)r->regs[R_PS_SRC_H],
                                            1 << 16) *
                               pvdc_plane_half_bytes(r), 2 * KiB);
    }
    if (needed > v->head[h]->regs[R_HS_BANDWIDTH]) {
        return pvdc_head_error(PVDC_ERR_BANDWIDTH);
    }
    return 0;
}

uint32_t pvdc_check_commit(PVDCCommitView *v, unsigned int *failed)
{
    unsigned int h;
    uint32_t err;

    for (h = 0; h < v->s->conf.num_heads; h++) {
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

/* What a doorbell guarantees of the armed commit of head @h. */
static bool pvdc_armed_valid(PVDCState *s, unsigned int h, Error **errp)
{
    PVDCHead *head = &s->heads[h];
    uint32_t all = MAKE_64BIT_MASK(0, s->conf.num_heads);
    unsigned int k, p;

    if (!head->is_armed) {
        return true;
    }
    if ((head->group & ~all) || !(head->group & BIT(h)) ||
        head->latch_ns < 0) {
        error_setg(errp, "pvdc: head %u: armed commit with group 0x%x "
                   "latching at %" PRId64 " ns", h, head->group,
                   head->latch_ns);
        return false;
    }
    for (k = 0; k < s->conf.num_heads; k++) {
        if ((head->group & BIT(k)) &&
            (!s->heads[k].is_armed || s->heads[k].group != head->group ||
             s->heads[k].latch_ns != head->latch_ns)) {
            error_setg(errp, "pvdc: heads %u and %u disagree on their "
                       "commit group", h, k);
            return false;
        }
    }
    for (p = 0; p < PVDC_MAX_PLANES; p++) {
        if (!head->plane_armed[p]) {
            continue;
        }
        if (p >= s->num_planes || head->armed_planes[p].regs[R_PS_HEAD] != h) {
            error_setg(errp, "pvdc: head %u: armed commit carries plane %u "
                       "bound to head %u", h, p,
                       head->armed_planes[p].regs[R_PS_HEAD]);
            return false;
        }
        for (k = 0; k < h; k++) {
            if ((head->group & BIT(k)) && s->heads[k].plane_armed[p]) {
                error_setg(errp, "pvdc: heads %u and %u of one group both "
                           "carry plane %u", k, h, p);
                return false;
            }
        }
    }
    return true;
}

bool pvdc_loaded_state_valid(PVDCState *s, Error **errp)
{
    PVDCCommitView view;
    unsigned int failed = 0;
    unsigned int h, p;
    uint32_t err;

    /*
     * The active state as one commit of every head, each carrying the
     * planes it shows and nothing changing: every rule applies.  Among
     * them the route: each enabled head drives a connector that exists,
     * one head a connector, as the consoles expect.
     */
    view.s = s;
    view.group = MAKE_64BIT_MASK(0, s->conf.num_heads);
    for (h = 0; h < s->conf.num_heads; h++) {
        view.head[h] = &s->heads[h].active;
    }
    for (p = 0; p < s->num_planes; p++) {
        const PVDCPlaneRegs *r = &s->planes[p].active;

        view.plane[p] = r;
        view.owner[p] = -1;
        if (!pvdc_plane_on(r)) {
            continue;
        }
        if (r->regs[R_PS_HEAD] >= s->conf.num_heads) {
            error_setg(errp, "pvdc: plane %u is shown on head %u, which "
                       "does not exist", p, r->regs[R_PS_HEAD]);
            return false;
        }
        view.owner[p] = r->regs[R_PS_HEAD];
    }
    err = pvdc_check_commit(&view, &failed);
    if (err) {
        char where[32];

        pvdc_error_where(err, where, sizeof(where));
        error_setg(errp, "pvdc: head %u: the active state breaks a rule: "
                   "%s%s", failed, pvdc_error_name(err), where);
        return false;
    }

    for (h = 0; h < s->conf.num_heads; h++) {
        /* pvdc series: color */
        PVDCHead *head = &s->heads[h];

        /* pvdc series: end color */
        if (!pvdc_armed_valid(s, h, errp)) {
            return false;
        }
        /* pvdc series: color */
        if (!pvdc_color_matches(s, &head->active, &head->active_color) ||
            (head->is_armed ?
             !pvdc_color_matches(s, &head->armed, &head->armed_color) :
             head->armed_color.degamma_size || head->armed_color.gamma_size ||
             head->armed_color.has_ctm)) {
            error_setg(errp, "pvdc: head %u: colour tables that do not "
                       "match the head state registers", h);
            return false;
        }
        /* pvdc series: end color */
    }
    return true;
}
