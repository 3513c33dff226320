/*
 * A reference model of pvdc's commits (see pvdc-model.h).
 *
 * Copyright (c) 2026 The pvdc authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "pvdc-model.h"

/* The state a commit would leave, and who carries each plane. */
typedef struct ModelView {
    uint32_t group;
    const uint32_t *h[PVDC_MAX_HEADS];
    const uint32_t *p[PVDC_MAX_PLANES];
    int by[PVDC_MAX_PLANES];
} ModelView;

static bool model_format_ok(Model *m, unsigned int plane, uint32_t fourcc)
{
    for (int i = 0; i < PVDC_MAX_FORMATS; i++) {
        if (m->fmt_table[i] && m->fmt_table[i] == fourcc) {
            return m->fmt_mask[model_type(m, plane)] & BIT(i);
        }
    }
    return false;
}

static bool model_scaled(const uint32_t *p)
{
    return (uint64_t)p[PS(PVDC_PS_SRC_W)] !=
           (uint64_t)PVDC_X(p[PS(PVDC_PS_DST_SIZE)]) * 65536 ||
           (uint64_t)p[PS(PVDC_PS_SRC_H)] !=
           (uint64_t)PVDC_Y(p[PS(PVDC_PS_DST_SIZE)]) * 65536;
}

static bool model_axis_bad(uint32_t timing, uint32_t sync, uint32_t max)
{
    uint32_t active = PVDC_X(timing), total = PVDC_Y(timing);
    uint32_t start = PVDC_X(sync), end = PVDC_Y(sync);

    return !(active > 0 && active <= max && start >= active && end >= start &&
             total >= end);
}

/* Taken from a head outside the commit that shows it: PLANE_BUSY. */
static bool model_busy(Model *m, ModelView *v, unsigned int p)
{
    uint32_t on_head = m->pa[p][PS(PVDC_PS_HEAD)];

    return model_on(m->pa[p]) &&
           !(on_head < m->heads && (v->group & BIT(on_head)));
}

/*
 * [@addr, @addr + @len) lies wholly in VRAM or wholly in one binding:
 * where a plane, a writeback target or a colour table may be.
 */
static bool model_in_memory(Model *m, uint64_t addr, uint64_t len)
{
    if (addr + len <= m->vram) {
        return true;
    }
    for (unsigned int i = 0; i < m->num_bindings; i++) {
        const ModelBinding *b = &m->bindings[i];

        if (addr >= b->addr && addr + len <= (uint64_t)b->addr + b->size) {
            return true;
        }
    }
    return false;
}

static uint32_t model_check_plane(Model *m, ModelView *v, unsigned int h,
                                  unsigned int p)
{
    const uint32_t *r = v->p[p];
    uint32_t ctrl = r[PS(PVDC_PS_CTRL)];
    uint32_t w = PVDC_X(r[PS(PVDC_PS_FB_SIZE)]);
    uint32_t hh = PVDC_Y(r[PS(PVDC_PS_FB_SIZE)]);
    uint32_t dw = PVDC_X(r[PS(PVDC_PS_DST_SIZE)]);
    uint32_t dh = PVDC_Y(r[PS(PVDC_PS_DST_SIZE)]);
    int dx = (int16_t)PVDC_X(r[PS(PVDC_PS_DST_POS)]);
    int dy = (int16_t)PVDC_Y(r[PS(PVDC_PS_DST_POS)]);
    uint64_t sw = r[PS(PVDC_PS_SRC_W)], sh = r[PS(PVDC_PS_SRC_H)];
    uint32_t fourcc = r[PS(PVDC_PS_FORMAT)];
    uint32_t pitch = r[PS(PVDC_PS_FB_PITCH)];
    uint64_t line;
    int type = model_type(m, p);
    unsigned int home = p / (m->overlays + 2);

    if ((ctrl & ~PVDC_PS_CTRL_VALID_MASK) ||
        ((ctrl >> PVDC_PS_CTRL_BLEND_SHIFT) & 3) == 3 ||
        ((ctrl >> PVDC_PS_CTRL_COLOR_ENCODING_SHIFT) & 3) == 3 ||
        (type == PVDC_PLANE_TYPE_CURSOR &&
         (ctrl & (PVDC_PS_CTRL_ROTATE_180 | PVDC_PS_CTRL_REFLECT_X |
                  PVDC_PS_CTRL_REFLECT_Y | PVDC_PS_CTRL_FILTER_BILINEAR)))) {
        return PVDC_ERR_PLANE_CTRL;
    }
    if (r[PS(PVDC_PS_HEAD)] >= m->heads ||
        (type != PVDC_PLANE_TYPE_OVERLAY && r[PS(PVDC_PS_HEAD)] != home)) {
        return PVDC_ERR_PLANE_HEAD;
    }
    if (model_busy(m, v, p)) {
        return PVDC_ERR_PLANE_BUSY;
    }
    if (!model_on(v->h[h])) {
        return PVDC_ERR_HEAD_DISABLED;
    }
    if (!model_format_ok(m, p, fourcc)) {
        return PVDC_ERR_FORMAT;
    }
    if (w == 0 || hh == 0 || w > m->max_w || hh > m->max_h ||
        (fourcc == PVDC_FMT_YUYV && w % 2)) {
        return PVDC_ERR_FB_SIZE;
    }
    line = (uint64_t)w * model_cpp(fourcc);
    if (pitch < line || pitch % m->pitch_align ||
        (uint64_t)pitch * hh > PVDC_FB_SPAN_MAX) {
        return PVDC_ERR_PITCH;
    }
    if (r[PS(PVDC_PS_FB_OFFSET)] % m->offset_align) {
        return PVDC_ERR_OFFSET_ALIGN;
    }
    if (!model_in_memory(m, r[PS(PVDC_PS_FB_OFFSET)],
                         (uint64_t)pitch * (hh - 1) + line)) {
        return PVDC_ERR_FB_BOUNDS;
    }
    if (model_chroma_bps(fourcc)) {
        uint64_t cline = (uint64_t)(w + 1) / 2 * model_chroma_bps(fourcc);
        uint64_t coff = r[PS(PVDC_PS_CHROMA_OFFSET)];
        uint64_t cpitch = r[PS(PVDC_PS_CHROMA_PITCH)];

        if (coff % m->offset_align || cpitch < cline ||
            cpitch % m->pitch_align ||
            cpitch * ((hh + 1) / 2) > PVDC_FB_SPAN_MAX ||
            !model_in_memory(m, coff, cpitch * ((hh + 1) / 2 - 1) + cline)) {
            return PVDC_ERR_CHROMA;
        }
    }
    if (sw == 0 || sh == 0 ||
        r[PS(PVDC_PS_SRC_X)] + sw > (uint64_t)w * 65536 ||
        r[PS(PVDC_PS_SRC_Y)] + sh > (uint64_t)hh * 65536) {
        return PVDC_ERR_SRC_RECT;
    }
    if (dw == 0 || dh == 0 || dw > m->max_w || dh > m->max_h ||
        abs(dx) > (int)m->max_w || abs(dy) > (int)m->max_h) {
        return PVDC_ERR_DST_RECT;
    }
    if (type == PVDC_PLANE_TYPE_CURSOR &&
        (dw > m->cursor_max || dh > m->cursor_max || model_scaled(r))) {
        return PVDC_ERR_CURSOR;
    }
    /* an upscale limit of 0 is none */
    if (sw > m->max_down * (uint64_t)dw * 65536 ||
        (m->max_up && (uint64_t)dw * 65536 > m->max_up * sw) ||
        sh > m->max_down * (uint64_t)dh * 65536 ||
        (m->max_up && (uint64_t)dh * 65536 > m->max_up * sh)) {
        return PVDC_ERR_SCALE_RATIO;
    }
    if (r[PS(PVDC_PS_ZPOS)] >= m->overlays + 2) {
        return PVDC_ERR_ZPOS;
    }
    for (unsigned int q = 0; q < m->planes; q++) {
        if (q != p && model_on(v->p[q]) && v->p[q][PS(PVDC_PS_HEAD)] == h &&
            v->p[q][PS(PVDC_PS_ZPOS)] == r[PS(PVDC_PS_ZPOS)]) {
            return PVDC_ERR_ZPOS;
        }
    }
    return 0;
}

/*
 * A table or matrix of @len bytes at @offset: misaligned, or neither in
 * VRAM nor in one binding.
 */
static bool model_color_span_bad(Model *m, uint32_t offset, uint64_t len)
{
    return offset % PVDC_COLOR_ALIGN || !model_in_memory(m, offset, len);
}

static bool model_lut_bad(Model *m, uint32_t offset, uint32_t size,
                          uint32_t max)
{
    return size < PVDC_LUT_MIN_SIZE || size > max ||
           model_color_span_bad(m, offset, (uint64_t)size *
                                           PVDC_LUT_ENTRY_SIZE);
}

/* The colour stages HS_CTRL enables, checked only for those. */
static bool model_color_bad(Model *m, const uint32_t *a)
{
    uint32_t ctrl = a[HS(PVDC_HS_CTRL)];
    uint32_t sizes = a[HS(PVDC_HS_LUT_SIZES)];

    return ((ctrl & PVDC_HS_CTRL_DEGAMMA) &&
            model_lut_bad(m, a[HS(PVDC_HS_DEGAMMA_LUT)], PVDC_X(sizes),
                          PVDC_X(m->lut_size))) ||
           ((ctrl & PVDC_HS_CTRL_CTM) &&
            model_color_span_bad(m, a[HS(PVDC_HS_CTM)], PVDC_CTM_SIZE)) ||
           ((ctrl & PVDC_HS_CTRL_GAMMA) &&
            model_lut_bad(m, a[HS(PVDC_HS_GAMMA_LUT)], PVDC_Y(sizes),
                          PVDC_Y(m->lut_size)));
}

/*
 * The writeback target of @a: format, alignment, a line, in VRAM or in
 * one binding.
 */
static bool model_writeback_bad(Model *m, const uint32_t *a)
{
    uint32_t fourcc = a[HS(PVDC_HS_WB_FORMAT)];
    uint64_t offset = a[HS(PVDC_HS_WB_OFFSET)];
    uint64_t pitch = a[HS(PVDC_HS_WB_PITCH)];
    uint64_t line = (uint64_t)PVDC_X(a[HS(PVDC_HS_HTIMING)]) * 4;
    uint64_t lines = PVDC_X(a[HS(PVDC_HS_VTIMING)]);
    bool taken = false;

    for (int i = 0; i < PVDC_MAX_FORMATS; i++) {
        taken |= m->fmt_table[i] && m->fmt_table[i] == fourcc &&
                 (m->wb_mask & BIT(i));
    }
    return !taken || offset % m->offset_align || pitch % m->pitch_align ||
           pitch < line || pitch * lines > PVDC_FB_SPAN_MAX ||
           !model_in_memory(m, offset, pitch * (lines - 1) + line);
}

/* The frame period of the timings of head state @a; 0 if they are invalid. */
static uint64_t model_mode_period(Model *m, const uint32_t *a)
{
    uint64_t pixels = (uint64_t)PVDC_Y(a[HS(PVDC_HS_HTIMING)]) *
                      PVDC_Y(a[HS(PVDC_HS_VTIMING)]);
    uint32_t clock = a[HS(PVDC_HS_PIXEL_CLOCK)];

    if (model_axis_bad(a[HS(PVDC_HS_HTIMING)], a[HS(PVDC_HS_HSYNC)],
                       m->max_w) ||
        model_axis_bad(a[HS(PVDC_HS_VTIMING)], a[HS(PVDC_HS_VSYNC)],
                       m->max_h) ||
        clock == 0 || clock > PVDC_MAX_PIXEL_CLOCK_KHZ ||
        pixels * 1000000 / clock < PVDC_MIN_FRAME_PERIOD_NS) {
        return 0;
    }
    return pixels * 1000000 / clock;
}

static uint32_t model_check_mode(Model *m, ModelView *v, unsigned int h)
{
    const uint32_t *a = v->h[h], *old = m->ha[h];
    uint64_t total = 0;

    if (!model_mode_period(m, a)) {
        return pvdc_head_result(PVDC_ERR_MODE);
    }
    /* a connector that exists, driven by no other head left enabled */
    if (a[HS(PVDC_HS_CONNECTOR)] >= m->heads) {
        return pvdc_head_result(PVDC_ERR_CONNECTOR);
    }
    for (unsigned int k = 0; k < m->heads; k++) {
        if (k != h && model_on(v->h[k]) &&
            v->h[k][HS(PVDC_HS_CONNECTOR)] == a[HS(PVDC_HS_CONNECTOR)]) {
            return pvdc_head_result(PVDC_ERR_CONNECTOR);
        }
    }
    if (model_on(old) &&
        (memcmp(&a[HS(PVDC_HS_HTIMING)], &old[HS(PVDC_HS_HTIMING)],
                (HS(PVDC_HS_PIXEL_CLOCK) - HS(PVDC_HS_HTIMING) + 1) *
                sizeof(uint32_t)) ||
         a[HS(PVDC_HS_CONNECTOR)] != old[HS(PVDC_HS_CONNECTOR)])) {
        return pvdc_head_result(PVDC_ERR_MODESET_REQUIRED);
    }
    if (model_on(old) &&
        a[HS(PVDC_HS_BANDWIDTH)] != old[HS(PVDC_HS_BANDWIDTH)]) {
        return pvdc_head_result(PVDC_ERR_BANDWIDTH_CHANGE);
    }
    for (unsigned int k = 0; k < m->heads; k++) {
        total += model_on(v->h[k]) ? v->h[k][HS(PVDC_HS_BANDWIDTH)] : 0;
    }
    if (total > m->bandwidth_total) {
        return pvdc_head_result(PVDC_ERR_BANDWIDTH_ALLOC);
    }
    if (model_color_bad(m, a)) {
        return pvdc_head_result(PVDC_ERR_COLOR);
    }
    if ((a[HS(PVDC_HS_CTRL)] & PVDC_HS_CTRL_WRITEBACK) &&
        model_writeback_bad(m, a)) {
        return pvdc_head_result(PVDC_ERR_WRITEBACK);
    }
    return 0;
}

static uint32_t model_check_sums(Model *m, ModelView *v, unsigned int h)
{
    uint64_t bandwidth = 0, scaled = 0;
    unsigned int p;

    for (p = 0; p < m->planes; p++) {
        if (model_on(v->p[p]) && model_scaled(v->p[p]) &&
            ++scaled > m->scalers) {
            return pvdc_result_of(PVDC_ERR_SCALERS, p);
        }
    }
    for (p = 0; p < m->planes; p++) {
        const uint32_t *r = v->p[p];

        if (model_on(r) && r[PS(PVDC_PS_HEAD)] == h) {
            uint32_t fourcc = r[PS(PVDC_PS_FORMAT)];
            uint64_t w = DIV_ROUND_UP((uint64_t)r[PS(PVDC_PS_SRC_W)], 65536);
            uint64_t hh = DIV_ROUND_UP((uint64_t)r[PS(PVDC_PS_SRC_H)], 65536);
            /* in quarters of a byte: a Cb:Cr sample per 4 pixels */
            uint64_t quarters = 4 * model_cpp(fourcc) +
                                model_chroma_bps(fourcc);

            bandwidth += DIV_ROUND_UP(w * hh * quarters, 4 * 1024);
        }
    }
    if (bandwidth > v->h[h][HS(PVDC_HS_BANDWIDTH)]) {
        return pvdc_head_result(PVDC_ERR_BANDWIDTH);
    }
    return 0;
}

static uint32_t model_check_head(Model *m, ModelView *v, unsigned int h)
{
    const uint32_t *a = v->h[h];
    uint32_t err;
    unsigned int p;

    /* ENABLE, the three colour stages and WRITEBACK: bits 0 to 4 */
    if (a[HS(PVDC_HS_CTRL)] & ~0x1fu) {
        return pvdc_head_result(PVDC_ERR_HEAD_RESERVED);
    }
    if (model_on(a)) {
        err = model_check_mode(m, v, h);
        if (err) {
            return err;
        }
    } else if (a[HS(PVDC_HS_CTRL)] & PVDC_HS_CTRL_WRITEBACK) {
        /* no frame to write */
        return pvdc_head_result(PVDC_ERR_WRITEBACK);
    }
    for (p = 0; p < m->planes; p++) {
        if (v->by[p] == (int)h && !model_on(v->p[p])) {
            /* carried disabled: still taken from its head */
            if (model_busy(m, v, p)) {
                return pvdc_result_of(PVDC_ERR_PLANE_BUSY, p);
            }
        } else if (v->by[p] == (int)h) {
            err = model_check_plane(m, v, h, p);
            if (err) {
                return pvdc_result_of(err, p);
            }
        } else if (v->by[p] < 0 && model_on(v->p[p]) &&
                   v->p[p][PS(PVDC_PS_HEAD)] == h && !model_on(a)) {
            return pvdc_result_of(PVDC_ERR_HEAD_DISABLED, p);
        }
    }
    return model_check_sums(m, v, h);
}

static uint32_t model_check(Model *m, ModelView *v, unsigned int *failed)
{
    uint32_t err;

    for (unsigned int h = 0; h < m->heads; h++) {
        if (v->group & BIT(h)) {
            err = model_check_head(m, v, h);
            if (err) {
                *failed = h;
                return err;
            }
        }
    }
    return 0;
}

bool model_group_may_defer(Model *m, uint32_t group)
{
    for (unsigned int h = 0; h < m->heads; h++) {
        if ((group & BIT(h)) &&
            (m->harm[h][HS(PVDC_HS_CTRL)] & PVDC_HS_CTRL_WRITEBACK)) {
            return true;
        }
    }
    return false;
}

void model_latch(Model *m, uint32_t group, uint32_t result[PVDC_MAX_HEADS])
{
    ModelView v;
    unsigned int h, p, failed = 0;
    uint32_t err;

    v.group = group;
    for (h = 0; h < m->heads; h++) {
        v.h[h] = group & BIT(h) ? m->harm[h] : m->ha[h];
    }
    for (p = 0; p < m->planes; p++) {
        v.p[p] = m->pa[p];
        v.by[p] = -1;
        for (h = 0; h < m->heads; h++) {
            if ((group & BIT(h)) && m->carried[h][p]) {
                v.p[p] = m->parm[h][p];
                v.by[p] = h;
            }
        }
    }
    err = model_check(m, &v, &failed);
    if (!err) {
        bool bound = false;

        for (p = 0; p < m->planes; p++) {
            if (v.by[p] >= 0) {
                memcpy(m->pa[p], v.p[p], sizeof(m->pa[p]));
                bound |= model_on(v.p[p]) &&
                         v.p[p][PS(PVDC_PS_FB_OFFSET)] >= m->vram;
            }
        }
        m->applied_bound += bound;
    }
    for (h = 0; h < m->heads; h++) {
        if (!(group & BIT(h))) {
            continue;
        }
        if (!err) {
            if (!model_on(m->ha[h]) && model_on(m->harm[h]) &&
                m->harm[h][HS(PVDC_HS_CONNECTOR)] != h) {
                m->rerouted++;
            }
            /* A timeline starts at the enable, unknown if it was late. */
            if (!model_on(m->ha[h]) && model_on(m->harm[h])) {
                m->t0[h] = model_group_may_defer(m, group) ? -1
                                                           : m->latch[h];
                m->period[h] = model_mode_period(m, m->harm[h]);
            } else if (!model_on(m->harm[h])) {
                m->period[h] = 0;
            }
            memcpy(m->ha[h], m->harm[h], sizeof(m->ha[h]));
            result[h] = PVDC_RESULT_APPLIED;
        } else {
            result[h] = h == failed ? err : pvdc_head_result(PVDC_ERR_GROUP);
        }
        m->armed &= ~BIT(h);
    }
    if (err) {
        m->rejected++;
        m->errors[err & PVDC_RESULT_CODE_MASK]++;
    } else {
        m->applied++;
    }
}

uint32_t model_check_active(Model *m, const PVDCSnapshot *active,
                            unsigned int *failed)
{
    ModelView v;
    unsigned int h, p;

    memcpy(m->ha, active->head, sizeof(m->ha));
    memcpy(m->pa, active->plane, sizeof(m->pa));
    v.group = MAKE_64BIT_MASK(0, m->heads);
    for (h = 0; h < m->heads; h++) {
        v.h[h] = m->ha[h];
    }
    for (p = 0; p < m->planes; p++) {
        uint32_t head = m->pa[p][PS(PVDC_PS_HEAD)];

        v.p[p] = m->pa[p];
        v.by[p] = -1;
        if (model_on(m->pa[p])) {
            if (head >= m->heads) {
                *failed = 0;
                return pvdc_result_of(PVDC_ERR_PLANE_HEAD, p);
            }
            v.by[p] = head;
        }
    }
    return model_check(m, &v, failed);
}

/*
 * Head @h takes its shadow state and that of the planes bound to it; when
 * it amends, such a plane leaves the other members of its group.
 */
static void model_snapshot(Model *m, unsigned int h)
{
    memcpy(m->harm[h], m->hs[h], sizeof(m->harm[h]));
    for (unsigned int p = 0; p < m->planes; p++) {
        m->carried[h][p] = m->ps[p][PS(PVDC_PS_HEAD)] == h;
        memcpy(m->parm[h][p], m->ps[p], sizeof(m->parm[h][p]));
        for (unsigned int k = 0; k < m->heads; k++) {
            if (m->carried[h][p] && k != h && (m->armed & BIT(h)) &&
                (m->group[h] & BIT(k))) {
                m->carried[k][p] = false;
            }
        }
    }
    m->seq[h]++;
}

/*
 * Where the commit just armed on head @h latches (docs/specs/pvdc.rst,
 * Latch point): its next vblank, a frame of the mode it enables (the
 * model's devices have no link-up delay), or at once; -1 if the head's
 * timeline is not known.
 */
static int64_t model_latch_point(Model *m, unsigned int h)
{
    if (model_on(m->ha[h])) {
        if (m->t0[h] < 0) {
            return -1;
        }
        return m->t0[h] + ((m->now - m->t0[h]) / m->period[h] + 1) *
                          m->period[h];
    }
    if (model_on(m->harm[h])) {
        return m->now + model_mode_period(m, m->harm[h]);
    }
    return m->now;
}

static void model_doorbell(Model *m, uint32_t mask)
{
    int64_t latch = m->now;

    if (m->armed & mask) {
        return;
    }
    for (unsigned int h = 0; h < m->heads; h++) {
        if (mask & BIT(h)) {
            model_snapshot(m, h);
            m->group[h] = mask;
            if (latch >= 0) {
                int64_t at = model_latch_point(m, h);

                latch = at < 0 ? -1 : MAX(latch, at);
            }
        }
    }
    for (unsigned int h = 0; h < m->heads; h++) {
        if (mask & BIT(h)) {
            m->latch[h] = latch;
        }
    }
    m->armed |= mask;
}

/* An armed commit snapshots again and keeps its group; else a doorbell. */
static void model_amend(Model *m, unsigned int h)
{
    if (!(m->armed & BIT(h))) {
        model_doorbell(m, BIT(h));
        return;
    }
    model_snapshot(m, h);
    m->amended++;
}

void model_init(Model *m, PVDCTest *t)
{
    uint32_t limits = pvdc_rd(t, PVDC_REG_SCALE_LIMITS);

    memset(m, 0, sizeof(*m));
    m->heads = t->heads;
    m->overlays = t->overlays;
    m->planes = t->planes;
    m->scalers = pvdc_rd(t, PVDC_REG_NUM_SCALERS);
    m->max_w = PVDC_X(pvdc_rd(t, PVDC_REG_MAX_SIZE));
    m->max_h = PVDC_Y(pvdc_rd(t, PVDC_REG_MAX_SIZE));
    m->bandwidth_total = pvdc_rd(t, PVDC_REG_BANDWIDTH_TOTAL);
    m->lut_size = pvdc_rd(t, PVDC_REG_LUT_SIZE);
    m->pitch_align = pvdc_rd(t, PVDC_REG_PITCH_ALIGN);
    m->offset_align = pvdc_rd(t, PVDC_REG_OFFSET_ALIGN);
    m->cursor_max = PVDC_X(pvdc_rd(t, PVDC_REG_CURSOR_MAX));
    m->max_down = (limits >> PVDC_SCALE_MAX_DOWNSCALE_SHIFT) &
                  PVDC_SCALE_FACTOR_MASK;
    m->max_up = (limits >> PVDC_SCALE_MAX_UPSCALE_SHIFT) &
                PVDC_SCALE_FACTOR_MASK;
    m->vram = t->vram_size;
    for (int i = 0; i < PVDC_MAX_FORMATS; i++) {
        m->fmt_table[i] = pvdc_rd(t, PVDC_REG_FORMAT_TABLE(i));
    }
    m->fmt_mask[PVDC_PLANE_TYPE_PRIMARY] = pvdc_rd(t, PVDC_REG_FORMATS_PRIMARY);
    m->fmt_mask[PVDC_PLANE_TYPE_OVERLAY] = pvdc_rd(t, PVDC_REG_FORMATS_OVERLAY);
    m->fmt_mask[PVDC_PLANE_TYPE_CURSOR] = pvdc_rd(t, PVDC_REG_FORMATS_CURSOR);
    m->wb_mask = pvdc_rd(t, PVDC_REG_FORMATS_WRITEBACK);
    for (unsigned int h = 0; h < m->heads; h++) {
        m->hs[h][HS(PVDC_HS_BANDWIDTH)] = m->bandwidth_total / m->heads;
        m->ha[h][HS(PVDC_HS_BANDWIDTH)] = m->bandwidth_total / m->heads;
        m->hs[h][HS(PVDC_HS_CONNECTOR)] = h;
        m->ha[h][HS(PVDC_HS_CONNECTOR)] = h;
    }
    for (unsigned int p = 0; p < m->planes; p++) {
        m->ps[p][PS(PVDC_PS_HEAD)] = m->pa[p][PS(PVDC_PS_HEAD)] =
            p / (m->overlays + 2);
        m->ps[p][PS(PVDC_PS_ALPHA)] = m->pa[p][PS(PVDC_PS_ALPHA)] = 0xffff;
    }
}

void model_bind_table(Model *m, uint64_t at, const uint64_t *entries,
                      uint32_t n)
{
    g_assert_cmpuint(n, <=, ARRAY_SIZE(m->table) / 2);
    m->table_at = at;
    m->table_n = n;
    memcpy(m->table, entries, 2 * n * sizeof(uint64_t));
}

static bool model_meets(uint64_t start, uint64_t end, uint64_t addr,
                        uint64_t size)
{
    return start < addr + size && addr < end;
}

static bool model_format_known(Model *m, uint32_t fourcc)
{
    for (int i = 0; i < PVDC_MAX_FORMATS; i++) {
        if (m->fmt_table[i] && m->fmt_table[i] == fourcc) {
            return true;
        }
    }
    return false;
}

/* An enabled plane reads a byte of the range: its framebuffer, Cb:Cr. */
static bool model_plane_uses(Model *m, const uint32_t *r, uint64_t addr,
                             uint64_t size)
{
    uint32_t fourcc = r[PS(PVDC_PS_FORMAT)];
    uint64_t w = PVDC_X(r[PS(PVDC_PS_FB_SIZE)]);
    uint64_t h = PVDC_Y(r[PS(PVDC_PS_FB_SIZE)]);
    uint64_t off = r[PS(PVDC_PS_FB_OFFSET)];
    uint64_t coff = r[PS(PVDC_PS_CHROMA_OFFSET)];

    if (!model_on(r) || !model_format_known(m, fourcc) || !w || !h) {
        return false;
    }
    return model_meets(off, off + r[PS(PVDC_PS_FB_PITCH)] * (h - 1) +
                       w * model_cpp(fourcc), addr, size) ||
           (model_chroma_bps(fourcc) &&
            model_meets(coff, coff + r[PS(PVDC_PS_CHROMA_PITCH)] *
                        ((h + 1) / 2 - 1) +
                        (w + 1) / 2 * model_chroma_bps(fourcc), addr, size));
}

/*
 * An enabled head uses a byte of the range: its writeback target (with
 * a format the device knows), the tables of its colour stages.
 */
static bool model_head_uses(Model *m, const uint32_t *a, uint64_t addr,
                            uint64_t size)
{
    uint32_t ctrl = a[HS(PVDC_HS_CTRL)];
    uint32_t sizes = a[HS(PVDC_HS_LUT_SIZES)];
    uint32_t fourcc = a[HS(PVDC_HS_WB_FORMAT)];
    uint64_t w = PVDC_X(a[HS(PVDC_HS_HTIMING)]);
    uint64_t h = PVDC_X(a[HS(PVDC_HS_VTIMING)]);
    uint64_t wb = a[HS(PVDC_HS_WB_OFFSET)];
    uint64_t degamma = a[HS(PVDC_HS_DEGAMMA_LUT)];
    uint64_t ctm = a[HS(PVDC_HS_CTM)];
    uint64_t gamma = a[HS(PVDC_HS_GAMMA_LUT)];

    if (!model_on(a)) {
        return false;
    }
    return ((ctrl & PVDC_HS_CTRL_WRITEBACK) && model_format_known(m, fourcc) &&
            w && h &&
            model_meets(wb, wb + a[HS(PVDC_HS_WB_PITCH)] * (h - 1) +
                        w * model_cpp(fourcc), addr, size)) ||
           ((ctrl & PVDC_HS_CTRL_DEGAMMA) &&
            model_meets(degamma, degamma + (uint64_t)PVDC_X(sizes) *
                        PVDC_LUT_ENTRY_SIZE, addr, size)) ||
           ((ctrl & PVDC_HS_CTRL_CTM) &&
            model_meets(ctm, ctm + PVDC_CTM_SIZE, addr, size)) ||
           ((ctrl & PVDC_HS_CTRL_GAMMA) &&
            model_meets(gamma, gamma + (uint64_t)PVDC_Y(sizes) *
                        PVDC_LUT_ENTRY_SIZE, addr, size));
}

/* The active state or an armed commit uses a byte of the range: busy. */
static bool model_range_busy(Model *m, uint64_t addr, uint64_t size)
{
    for (unsigned int p = 0; p < m->planes; p++) {
        if (model_plane_uses(m, m->pa[p], addr, size)) {
            return true;
        }
    }
    for (unsigned int h = 0; h < m->heads; h++) {
        if (model_head_uses(m, m->ha[h], addr, size)) {
            return true;
        }
        if (!(m->armed & BIT(h))) {
            continue;
        }
        if (model_head_uses(m, m->harm[h], addr, size)) {
            return true;
        }
        for (unsigned int p = 0; p < m->planes; p++) {
            if (m->carried[h][p] &&
                model_plane_uses(m, m->parm[h][p], addr, size)) {
                return true;
            }
        }
    }
    return false;
}

/* BIND as the spec orders its checks (the test's tables are in RAM). */
static uint32_t model_bind(Model *m)
{
    uint64_t addr = m->bind_addr, size = m->bind_size, sum = 0;
    uint64_t table = (uint64_t)m->bind_table_hi << 32 | m->bind_table_lo;
    uint32_t n = m->bind_entries;
    ModelBinding *b;

    if (!size || addr % PVDC_BIND_PAGE_SIZE || size % PVDC_BIND_PAGE_SIZE ||
        addr < m->vram || addr + size > (1ULL << 32)) {
        return PVDC_BIND_ERR_RANGE;
    }
    for (unsigned int i = 0; i < m->num_bindings; i++) {
        if (model_meets(m->bindings[i].addr,
                        (uint64_t)m->bindings[i].addr + m->bindings[i].size,
                        addr, size)) {
            return PVDC_BIND_ERR_OVERLAP;
        }
    }
    if (model_range_busy(m, addr, size)) {
        return PVDC_BIND_ERR_BUSY;
    }
    if (m->num_bindings == PVDC_MAX_BINDINGS) {
        return PVDC_BIND_ERR_NOSPC;
    }
    if (table % PVDC_BIND_TABLE_ALIGN || !n || n > PVDC_MAX_BIND_ENTRIES) {
        return PVDC_BIND_ERR_TABLE;
    }
    if (m->bound_entries + n > PVDC_MAX_BIND_ENTRIES) {
        return PVDC_BIND_ERR_NOSPC;
    }
    /* only the tables the test wrote are bound */
    g_assert_cmphex(table, ==, m->table_at);
    g_assert_cmpuint(n, ==, m->table_n);
    for (uint32_t i = 0; i < n; i++) {
        uint64_t len = m->table[2 * i + 1];

        if (!len || m->table[2 * i] % PVDC_BIND_PAGE_SIZE ||
            len % PVDC_BIND_PAGE_SIZE || len > size - sum) {
            return PVDC_BIND_ERR_TABLE;
        }
        sum += len;
    }
    if (sum != size) {
        return PVDC_BIND_ERR_TABLE;
    }
    b = &m->bindings[m->num_bindings++];
    b->addr = addr;
    b->size = size;
    b->entries = n;
    m->bound_entries += n;
    return PVDC_BIND_OK;
}

static uint32_t model_unbind(Model *m)
{
    for (unsigned int i = 0; i < m->num_bindings; i++) {
        ModelBinding *b = &m->bindings[i];

        if (b->addr == m->bind_addr && b->size == m->bind_size) {
            if (model_range_busy(m, b->addr, b->size)) {
                return PVDC_BIND_ERR_BUSY;
            }
            m->bound_entries -= b->entries;
            *b = m->bindings[--m->num_bindings];
            return PVDC_BIND_OK;
        }
    }
    return PVDC_BIND_ERR_NOT_BOUND;
}

static void model_bind_cmd(Model *m, uint32_t cmd)
{
    if (cmd == PVDC_BIND_CMD_BIND) {
        m->bind_status = model_bind(m);
    } else if (cmd == PVDC_BIND_CMD_UNBIND) {
        m->bind_status = model_unbind(m);
    } else {
        return;
    }
    m->bind_outcomes[cmd == PVDC_BIND_CMD_UNBIND][m->bind_status]++;
}

void model_write(Model *m, uint32_t addr, uint32_t val)
{
    uint32_t all = MAKE_64BIT_MASK(0, m->heads);

    if (addr >= PVDC_HEAD_SHADOW_BASE &&
        addr < PVDC_HEAD_SHADOW(m->heads) &&
        addr % PVDC_HEAD_STRIDE < PVDC_HEAD_STATE_REGS * 4) {
        m->hs[(addr - PVDC_HEAD_SHADOW_BASE) / PVDC_HEAD_STRIDE]
             [addr % PVDC_HEAD_STRIDE / 4] = val;
    } else if (addr >= PVDC_PLANE_SHADOW_BASE &&
               addr < PVDC_PLANE_SHADOW(m->planes) &&
               addr % PVDC_PLANE_STRIDE < PVDC_PLANE_STATE_REGS * 4) {
        m->ps[(addr - PVDC_PLANE_SHADOW_BASE) / PVDC_PLANE_STRIDE]
             [addr % PVDC_PLANE_STRIDE / 4] = val;
    } else if (addr >= PVDC_HEAD_CONTROL_BASE &&
               addr < PVDC_HEAD_CONTROL(m->heads) &&
               addr % PVDC_HEAD_STRIDE == PVDC_HEAD_DOORBELL) {
        unsigned int h = (addr - PVDC_HEAD_CONTROL_BASE) / PVDC_HEAD_STRIDE;

        if (val == PVDC_DOORBELL_ARM) {
            model_doorbell(m, BIT(h));
        } else if (val == PVDC_DOORBELL_AMEND) {
            model_amend(m, h);
        }
    } else if (addr == PVDC_REG_MULTI_DOORBELL && val && !(val & ~all)) {
        model_doorbell(m, val);
    } else if (addr == PVDC_REG_BIND_ADDR) {
        m->bind_addr = val;
    } else if (addr == PVDC_REG_BIND_SIZE) {
        m->bind_size = val;
    } else if (addr == PVDC_REG_BIND_TABLE_LO) {
        m->bind_table_lo = val;
    } else if (addr == PVDC_REG_BIND_TABLE_HI) {
        m->bind_table_hi = val;
    } else if (addr == PVDC_REG_BIND_ENTRIES) {
        m->bind_entries = val;
    } else if (addr == PVDC_REG_BIND_CMD) {
        model_bind_cmd(m, val);
    }
}
