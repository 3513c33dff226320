/*
 * The pvdc compose qtest library: scenes, their commits and the reference
 * composer (pvdc-qtest-compose.h says what each helper does).
 *
 * Copyright (c) 2026 The pvdc authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "pvdc-qtest-compose.h"
#include "pvdc-color-ref.h"

/* ------------------------------------------------------------------------ */
/* Device access                                                            */
/* ------------------------------------------------------------------------ */

unsigned int pvdc_slot_index(unsigned int head, unsigned int slot)
{
    return head * SLOTS + slot;
}

char *pvdc_compose_props(const char *props)
{
    return g_strdup_printf("heads=2,overlays=%d,scalers=8%s%s", OVERLAYS,
                           props ? "," : "", props ? props : "");
}

void pvdc_compose_start_with(PVDCCompose *t, const char *props,
                             const char *extra, bool crc)
{
    g_autofree char *all = pvdc_compose_props(props);

    memset(t, 0, sizeof(*t));
    pvdc_test_start_with(&t->p, all, extra);
    t->shadow = g_malloc0(SHADOW_VRAM);
    for (unsigned int head = 0; crc && head < 2; head++) {
        pvdc_wr(&t->p, PVDC_HEAD_CONTROL(head) + PVDC_HEAD_CRC_CTRL,
                PVDC_CRC_CTRL_ENABLE);
    }
}

void pvdc_compose_start(PVDCCompose *t, const char *props, bool crc)
{
    pvdc_compose_start_with(t, props, NULL, crc);
}

void pvdc_compose_stop(PVDCCompose *t)
{
    g_free(t->shadow);
    pvdc_test_stop(&t->p);
}

void pvdc_vram_write(PVDCCompose *t, uint32_t offset, const void *buf,
                     size_t len)
{
    g_assert_cmpuint(offset + len, <=, SHADOW_VRAM);
    memcpy(t->shadow + offset, buf, len);
    qpci_memwrite(t->p.dev, t->p.vram, offset, buf, len);
}

uint64_t pvdc_compositions(PVDCCompose *t, unsigned int head)
{
    g_autofree char *prop = g_strdup_printf("x-head%u-compositions", head);

    return pvdc_statistic(t->p.qts, prop);
}

/* ------------------------------------------------------------------------ */
/* Commits                                                                  */
/* ------------------------------------------------------------------------ */

void pvdc_write_scene_plane(PVDCCompose *t, unsigned int head,
                            const PVDCPlane *p)
{
    uint64_t base = PVDC_PLANE_SHADOW(pvdc_slot_index(head, p->slot));

    pvdc_wr(&t->p, base + PVDC_PS_HEAD, head);
    pvdc_wr(&t->p, base + PVDC_PS_FORMAT, p->format);
    pvdc_wr(&t->p, base + PVDC_PS_FB_OFFSET, FB_BASE(p->fb));
    pvdc_wr(&t->p, base + PVDC_PS_FB_PITCH, p->pitch);
    pvdc_wr(&t->p, base + PVDC_PS_FB_SIZE, PVDC_XY(p->fb_w, p->fb_h));
    pvdc_wr(&t->p, base + PVDC_PS_SRC_X, p->src_x);
    pvdc_wr(&t->p, base + PVDC_PS_SRC_Y, p->src_y);
    pvdc_wr(&t->p, base + PVDC_PS_SRC_W, p->src_w);
    pvdc_wr(&t->p, base + PVDC_PS_SRC_H, p->src_h);
    pvdc_wr(&t->p, base + PVDC_PS_DST_POS, PVDC_XY(p->dst_x, p->dst_y));
    pvdc_wr(&t->p, base + PVDC_PS_DST_SIZE, PVDC_XY(p->dst_w, p->dst_h));
    pvdc_wr(&t->p, base + PVDC_PS_ZPOS, p->zpos);
    pvdc_wr(&t->p, base + PVDC_PS_ALPHA, p->alpha);
    pvdc_wr(&t->p, base + PVDC_PS_HOTSPOT, p->hotspot);
    pvdc_wr(&t->p, base + PVDC_PS_CHROMA_OFFSET, CHROMA_BASE(p->fb));
    pvdc_wr(&t->p, base + PVDC_PS_CHROMA_PITCH, p->chroma_pitch);
    pvdc_wr(&t->p, base + PVDC_PS_CTRL, p->ctrl | PVDC_PS_CTRL_ENABLE);
}

void pvdc_write_lut(PVDCCompose *t, uint32_t offset, const uint16_t *lut,
                    uint32_t size)
{
    g_autofree uint16_t *le = g_new(uint16_t, 4 * size);

    for (uint32_t i = 0; i < 4 * size; i++) {
        le[i] = cpu_to_le16(lut[i]);
    }
    qpci_memwrite(t->p.dev, t->p.vram, offset, le, 8 * size);
}

void pvdc_write_color(PVDCCompose *t, unsigned int head, const PVDCColor *c)
{
    uint64_t hs = PVDC_HEAD_SHADOW(head);
    uint64_t ctm[9];

    pvdc_write_lut(t, COLOR_DEGAMMA, c->degamma, c->degamma_size);
    pvdc_write_lut(t, COLOR_GAMMA, c->gamma, c->gamma_size);
    for (unsigned int i = 0; i < 9; i++) {
        ctm[i] = cpu_to_le64(c->ctm[i]);
    }
    qpci_memwrite(t->p.dev, t->p.vram, COLOR_CTM, ctm, sizeof(ctm));
    pvdc_wr(&t->p, hs + PVDC_HS_DEGAMMA_LUT, COLOR_DEGAMMA);
    pvdc_wr(&t->p, hs + PVDC_HS_CTM, COLOR_CTM);
    pvdc_wr(&t->p, hs + PVDC_HS_GAMMA_LUT, COLOR_GAMMA);
    pvdc_wr(&t->p, hs + PVDC_HS_LUT_SIZES,
            PVDC_XY(c->degamma_size, c->gamma_size));
}

uint32_t pvdc_try_commit_scene(PVDCCompose *t, unsigned int head,
                               const PVDCScene *scene)
{
    uint64_t hs = PVDC_HEAD_SHADOW(head);
    unsigned int i;
    uint32_t result;

    pvdc_wr(&t->p, hs + PVDC_HS_HTIMING, PVDC_XY(MODE_W, MODE_HTOTAL));
    pvdc_wr(&t->p, hs + PVDC_HS_HSYNC, PVDC_XY(MODE_W + 2, MODE_W + 6));
    pvdc_wr(&t->p, hs + PVDC_HS_VTIMING, PVDC_XY(MODE_H, MODE_VTOTAL));
    pvdc_wr(&t->p, hs + PVDC_HS_VSYNC, PVDC_XY(MODE_H + 1, MODE_H + 2));
    pvdc_wr(&t->p, hs + PVDC_HS_PIXEL_CLOCK, CLOCK_1MS);
    pvdc_wr(&t->p, hs + PVDC_HS_BACKGROUND, scene->background);
    if (scene->color) {
        pvdc_write_color(t, head, scene->color);
    }
    if (scene->wb) {
        pvdc_wr(&t->p, hs + PVDC_HS_WB_FORMAT, scene->wb->format);
        pvdc_wr(&t->p, hs + PVDC_HS_WB_OFFSET, WB_BASE);
        pvdc_wr(&t->p, hs + PVDC_HS_WB_PITCH, scene->wb->pitch);
    }
    pvdc_wr(&t->p, hs + PVDC_HS_CTRL, PVDC_HS_CTRL_ENABLE |
            (scene->color ? scene->color->stages : 0) |
            (scene->wb ? PVDC_HS_CTRL_WRITEBACK : 0));
    for (i = 0; i < SLOTS; i++) {
        pvdc_wr(&t->p,
                PVDC_PLANE_SHADOW(pvdc_slot_index(head, i)) + PVDC_PS_CTRL, 0);
    }
    for (i = 0; i < scene->num_planes; i++) {
        pvdc_write_scene_plane(t, head, &scene->planes[i]);
    }

    result = pvdc_commit(&t->p, head);
    t->head_on[head] |= result == PVDC_RESULT_APPLIED;
    return result;
}

void pvdc_commit_scene(PVDCCompose *t, unsigned int head,
                       const PVDCScene *scene)
{
    g_assert_cmphex(pvdc_try_commit_scene(t, head, scene), ==,
                    PVDC_RESULT_APPLIED);
}

uint32_t pvdc_next_frame_crc(PVDCCompose *t, unsigned int head)
{
    uint32_t count = pvdc_head_ctl(&t->p, head, PVDC_HEAD_VBLANK_COUNT);
    uint32_t crc, frame;

    pvdc_step_to_next_vblank(&t->p, head);
    g_assert_cmpuint(pvdc_head_ctl(&t->p, head, PVDC_HEAD_VBLANK_COUNT), ==,
                     count + 1);
    crc = pvdc_read_crc(&t->p, head, &frame);
    g_assert_cmpuint(frame, ==, count + 1);
    return crc;
}

/* ------------------------------------------------------------------------ */
/* Framebuffer contents                                                     */
/* ------------------------------------------------------------------------ */

uint32_t pvdc_format_cpp(uint32_t format)
{
    switch (format) {
    case PVDC_FMT_NV12:
        return 1;
    case PVDC_FMT_RGB565:
    case PVDC_FMT_YUYV:
    case PVDC_FMT_P010:
        return 2;
    default:
        return 4;
    }
}

uint32_t pvdc_chroma_bps(uint32_t format)
{
    return format == PVDC_FMT_NV12 ? 2 : format == PVDC_FMT_P010 ? 4 : 0;
}

bool pvdc_is_ycbcr(uint32_t format)
{
    return format == PVDC_FMT_YUYV || pvdc_chroma_bps(format);
}

uint32_t pvdc_noise(uint32_t seed, uint32_t x, uint32_t y)
{
    uint32_t v = seed * 0x9e3779b9u ^ x * 0x85ebca6bu ^ y * 0xc2b2ae35u;

    v ^= v >> 15;
    v *= 0x2c1b3c6du;
    v ^= v >> 12;
    v *= 0x297a2d39u;
    return v ^ v >> 15;
}

void pvdc_fill_lines(PVDCCompose *t, uint32_t offset, uint32_t pitch,
                     uint32_t cpp, uint32_t w, uint32_t h, uint32_t seed)
{
    g_autofree uint8_t *buf = g_malloc0((size_t)pitch * h);
    uint32_t x, y;

    for (y = 0; y < h; y++) {
        uint8_t *line = buf + (size_t)y * pitch;

        for (x = 0; x < w; x++) {
            uint32_t v = pvdc_noise(seed, x, y);

            if (cpp == 4) {
                stl_le_p(line + x * 4, v);
            } else if (cpp == 2) {
                stw_le_p(line + x * 2, v);
            } else {
                line[x] = v;
            }
        }
    }
    pvdc_vram_write(t, offset, buf, (size_t)pitch * h);
}

uint32_t pvdc_fill_fb_aligned(PVDCCompose *t, unsigned int fb, uint32_t format,
                              uint32_t w, uint32_t h, uint32_t seed,
                              uint32_t align, uint32_t *chroma_pitch)
{
    uint32_t cpp = pvdc_format_cpp(format), bps = pvdc_chroma_bps(format);
    uint32_t pitch = ROUND_UP(w * cpp, align);

    g_assert_cmpuint((size_t)pitch * h, <=, bps ? CHROMA_AT : FB_SPACING);
    pvdc_fill_lines(t, FB_BASE(fb), pitch, cpp, w, h, seed);
    if (bps) {
        uint32_t cw = DIV_ROUND_UP(w, 2), ch = DIV_ROUND_UP(h, 2);
        uint32_t cpitch = ROUND_UP(cw * bps, align);

        g_assert_cmpuint((size_t)cpitch * ch, <=, FB_SPACING - CHROMA_AT);
        /* a sample is 2 or 4 bytes: written as units of that size */
        pvdc_fill_lines(t, CHROMA_BASE(fb), cpitch, bps, cw, ch, seed ^ 0x5a5a);
        *chroma_pitch = cpitch;
    }
    return pitch;
}

uint32_t pvdc_fill_fb(PVDCCompose *t, unsigned int fb, uint32_t format,
                      uint32_t w, uint32_t h, uint32_t seed,
                      uint32_t *chroma_pitch)
{
    return pvdc_fill_fb_aligned(t, fb, format, w, h, seed, 64, chroma_pitch);
}

uint32_t pvdc_fill_gradient(PVDCCompose *t, unsigned int fb, uint32_t w,
                            uint32_t h)
{
    uint32_t pitch = ROUND_UP(w * 4, 64);
    g_autofree uint8_t *buf = g_malloc0((size_t)pitch * h);
    uint32_t x, y;

    for (y = 0; y < h; y++) {
        for (x = 0; x < w; x++) {
            uint32_t r = (x * 16) & 0xff, g = (y * 12) & 0xff;
            uint32_t b = ((x + y) * 8) & 0xff;

            stl_le_p(buf + (size_t)y * pitch + x * 4, r << 16 | g << 8 | b);
        }
    }
    pvdc_vram_write(t, FB_BASE(fb), buf, (size_t)pitch * h);
    return pitch;
}

PVDCPlane pvdc_scene_plane(PVDCCompose *t, unsigned int slot, uint32_t format,
                           unsigned int fb, uint32_t w, uint32_t h, int x,
                           int y, uint32_t zpos)
{
    PVDCPlane p = {
        .slot = slot,
        .format = format,
        .fb = fb,
        .fb_w = w,
        .fb_h = h,
        .src_w = FP16(w),
        .src_h = FP16(h),
        .dst_x = x,
        .dst_y = y,
        .dst_w = w,
        .dst_h = h,
        .zpos = zpos,
        .alpha = 0xffff,
    };

    p.pitch = pvdc_fill_fb(t, fb, format, w, h, fb * 7919 + format,
                           &p.chroma_pitch);
    return p;
}

/* ------------------------------------------------------------------------ */
/* Reference composer                                                       */
/* ------------------------------------------------------------------------ */

/* pixman's x * a / 255, rounded */
static uint32_t mul8(uint32_t x, uint32_t a)
{
    uint32_t v = x * a + 0x80;

    return (v + (v >> 8)) >> 8;
}

uint32_t pvdc_chan(uint32_t v, int shift)
{
    return (v >> shift) & 0xff;
}

uint32_t pvdc_clamp8(int64_t v)
{
    return v < 0 ? 0 : v > 255 ? 255 : v;
}

/*
 * The YCbCr coefficients of docs/specs/pvdc.rst, 16.16: y, r_v, g_u, g_v,
 * b_u, for [COLOR_ENCODING][COLOR_RANGE_FULL][10-bit].
 */
static const int32_t yuv_coeffs[3][2][2][5] = {
    {   /* BT.601 */
        { { 76309, 104597, 25675, 53279, 132201 },
          { 19077, 26149, 6419, 13320, 33050 } },
        { { 65536, 91881, 22553, 46802, 116130 },
          { 16336, 22903, 5622, 11666, 28947 } },
    },
    {   /* BT.709 */
        { { 76309, 117489, 13975, 34925, 138438 },
          { 19077, 29372, 3494, 8731, 34610 } },
        { { 65536, 103206, 12276, 30679, 121609 },
          { 16336, 25726, 3060, 7647, 30313 } },
    },
    {   /* BT.2020 */
        { { 76309, 110014, 12277, 42626, 140363 },
          { 19077, 27503, 3069, 10657, 35091 } },
        { { 65536, 96639, 10784, 37444, 123299 },
          { 16336, 24089, 2688, 9334, 30734 } },
    },
};

/*
 * The pixel of luma @y and chroma @u, @v in eighths (8 * Cb, 8 * Cr for a
 * pixel that takes one sample), @depth-bit components, in the encoding
 * and range of plane control @ctrl; the spec's fixed point formulas.
 */
static uint32_t yuv_to_rgb(uint32_t ctrl, int depth, int y, int u, int v)
{
    unsigned int enc = (ctrl >> PVDC_PS_CTRL_COLOR_ENCODING_SHIFT) &
                       PVDC_PS_CTRL_COLOR_ENCODING_MASK;
    bool full = ctrl & PVDC_PS_CTRL_COLOR_RANGE_FULL;
    const int32_t *k = yuv_coeffs[enc][full][depth == 10];
    int64_t y_off = full ? 0 : 16 << (depth - 8);
    int64_t c_off8 = 8 << (depth - 1);
    int64_t l = k[0] * 8 * (y - y_off) + (1 << 18);
    int64_t r = l + k[1] * (v - c_off8);
    int64_t g = l - k[2] * (u - c_off8) - k[3] * (v - c_off8);
    int64_t b = l + k[4] * (u - c_off8);

    /* >> of a negative value floors, as the spec says */
    return pvdc_clamp8(r >> 19) << 16 | pvdc_clamp8(g >> 19) << 8 |
           pvdc_clamp8(b >> 19);
}

/* Component @c (0: Cb, 1: Cr) of Cb:Cr sample (@j, @k) of @p. */
static int chroma_sample(PVDCCompose *t, const PVDCPlane *p, int64_t j,
                         int64_t k, int c)
{
    const uint8_t *line = t->shadow + CHROMA_BASE(p->fb) +
                          (size_t)k * p->chroma_pitch;

    return p->format == PVDC_FMT_P010 ? lduw_le_p(line + j * 4 + c * 2) >> 6
                                      : line[j * 2 + c];
}

/*
 * Pixel (@x, @y) of an NV12 or P010 plane: chroma sited as MPEG-2 does,
 * interpolated in eighths from the samples of the source rectangle
 * rounded out (the spec's "Chroma siting"), the edge samples repeating.
 */
static uint32_t fetch_two_plane(PVDCCompose *t, const PVDCPlane *p,
                                const uint8_t *line, uint32_t x, uint32_t y)
{
    int64_t img_x1 = DIV_ROUND_UP((uint64_t)p->src_x + p->src_w, 1 << 16);
    int64_t img_y1 = DIV_ROUND_UP((uint64_t)p->src_y + p->src_h, 1 << 16);
    int64_t cx0 = (p->src_x >> 16) / 2, cx1 = (img_x1 - 1) / 2 + 1;
    int64_t cy0 = (p->src_y >> 16) / 2, cy1 = (img_y1 - 1) / 2 + 1;
    int64_t row = y / 2, other = y % 2 ? row + 1 : row - 1;
    int64_t j0 = x / 2, j1 = x % 2 ? x / 2 + 1 : x / 2;
    bool wide = p->format == PVDC_FMT_P010;
    int luma = wide ? lduw_le_p(line + x * 2) >> 6 : line[x];
    int uv[2];

    other = MIN(MAX(other, cy0), cy1 - 1);
    j0 = MIN(MAX(j0, cx0), cx1 - 1);
    j1 = MIN(MAX(j1, cx0), cx1 - 1);
    for (int c = 0; c < 2; c++) {
        uv[c] = 3 * chroma_sample(t, p, j0, row, c) +
                chroma_sample(t, p, j0, other, c) +
                3 * chroma_sample(t, p, j1, row, c) +
                chroma_sample(t, p, j1, other, c);
    }
    return yuv_to_rgb(p->ctrl, wide ? 10 : 8, luma, uv[0], uv[1]);
}

uint32_t pvdc_ref_fetch(PVDCCompose *t, const PVDCPlane *p, uint32_t x,
                        uint32_t y, uint32_t *alpha)
{
    const uint8_t *line = t->shadow + FB_BASE(p->fb) + (size_t)y * p->pitch;
    uint32_t v, r, g, b;

    *alpha = 0xff;
    switch (p->format) {
    case PVDC_FMT_XRGB8888:
        return ldl_le_p(line + x * 4) & 0xffffff;
    case PVDC_FMT_ARGB8888:
        v = ldl_le_p(line + x * 4);
        *alpha = v >> 24;
        return v & 0xffffff;
    case PVDC_FMT_XBGR8888:
    case PVDC_FMT_ABGR8888:
        v = ldl_le_p(line + x * 4);
        if (p->format == PVDC_FMT_ABGR8888) {
            *alpha = v >> 24;
        }
        return pvdc_chan(v, 0) << 16 | pvdc_chan(v, 8) << 8 | pvdc_chan(v, 16);
    case PVDC_FMT_RGB565:
        v = lduw_le_p(line + x * 2);
        r = v >> 11;
        g = (v >> 5) & 0x3f;
        b = v & 0x1f;
        return (r << 3 | r >> 2) << 16 | (g << 2 | g >> 4) << 8 |
               (b << 3 | b >> 2);
    case PVDC_FMT_XRGB2101010:
        /* the 8 most significant bits of each channel */
        v = ldl_le_p(line + x * 4);
        return ((v >> 22) & 0xff) << 16 | ((v >> 12) & 0xff) << 8 |
               ((v >> 2) & 0xff);
    case PVDC_FMT_YUYV: {
        const uint8_t *m = line + (x & ~1u) * 2;

        return yuv_to_rgb(p->ctrl, 8, m[x & 1 ? 2 : 0], 8 * m[1], 8 * m[3]);
    }
    case PVDC_FMT_NV12:
    case PVDC_FMT_P010:
        return fetch_two_plane(t, p, line, x, y);
    default:
        g_assert_not_reached();
    }
}

uint32_t pvdc_ref_sample(uint32_t src, uint32_t src_size, uint32_t dst_size,
                         bool flip, int64_t d, int64_t lo, int64_t hi)
{
    int64_t scale = ((uint64_t)src_size + dst_size / 2) / dst_size;
    int64_t origin = (int64_t)src - (lo << 16);
    int64_t u;

    if (flip) {
        scale = -scale;
        origin += src_size;
    }
    /* pixman: (d + 1/2) transformed, with its rounding, minus epsilon */
    u = scale * d + ((scale * 0x8000 + 0x8000) >> 16) + origin;
    u = lo + ((u - 1) >> 16);
    return MIN(MAX(u, lo), hi - 1);
}

/* @c as the reference model takes it: only the stages it enables. */
static RefColorDesc ref_color_desc(const PVDCColor *c)
{
    RefColorDesc d = {};

    if (c->stages & PVDC_HS_CTRL_DEGAMMA) {
        d.degamma = c->degamma;
        d.degamma_size = c->degamma_size;
    }
    if (c->stages & PVDC_HS_CTRL_CTM) {
        d.ctm = c->ctm;
    }
    if (c->stages & PVDC_HS_CTRL_GAMMA) {
        d.gamma = c->gamma;
        d.gamma_size = c->gamma_size;
    }
    return d;
}

static void reference_blend(PVDCCompose *t, const PVDCScene *scene,
                            uint32_t *out);

/* @scene without its colour pipeline. */
static void reference_blend(PVDCCompose *t, const PVDCScene *scene,
                            uint32_t *out)
{
    const PVDCPlane *order[SLOTS];
    unsigned int i, j, n = scene->num_planes;
    int x, y;

    for (i = 0; i < MODE_W * MODE_H; i++) {
        out[i] = scene->background & 0xffffff;
    }
    for (i = 0; i < n; i++) {
        for (j = i; j > 0 && order[j - 1]->zpos > scene->planes[i].zpos; j--) {
            order[j] = order[j - 1];
        }
        order[j] = &scene->planes[i];
    }

    for (i = 0; i < n; i++) {
        const PVDCPlane *p = order[i];
        uint32_t pa = (p->alpha * 255 + 32767) / 65535;
        uint32_t blend = (p->ctrl >> PVDC_PS_CTRL_BLEND_SHIFT) &
                         PVDC_PS_CTRL_BLEND_MASK;
        bool has_alpha = p->format == PVDC_FMT_ARGB8888 ||
                         p->format == PVDC_FMT_ABGR8888;
        bool pixel_alpha = has_alpha && blend != PVDC_BLEND_NONE;
        bool rot = p->ctrl & PVDC_PS_CTRL_ROTATE_180;
        bool flip_x = !!(p->ctrl & PVDC_PS_CTRL_REFLECT_X) ^ rot;
        bool flip_y = !!(p->ctrl & PVDC_PS_CTRL_REFLECT_Y) ^ rot;
        int64_t lo_x = p->src_x >> 16, lo_y = p->src_y >> 16;
        int64_t hi_x = DIV_ROUND_UP((uint64_t)p->src_x + p->src_w, 1 << 16);
        int64_t hi_y = DIV_ROUND_UP((uint64_t)p->src_y + p->src_h, 1 << 16);

        if (!pa) {
            continue;
        }
        if (p->format == PVDC_FMT_RGB565 || p->format == PVDC_FMT_YUYV) {
            lo_x &= ~1;
        }
        if (p->format == PVDC_FMT_YUYV) {
            hi_x = ROUND_UP(hi_x, 2);
        }
        for (y = MAX(p->dst_y, 0); y < MIN(p->dst_y + (int)p->dst_h, MODE_H);
             y++) {
            uint32_t fy = pvdc_ref_sample(p->src_y, p->src_h, p->dst_h, flip_y,
                                          y - p->dst_y, lo_y, hi_y);

            for (x = MAX(p->dst_x, 0);
                 x < MIN(p->dst_x + (int)p->dst_w, MODE_W); x++) {
                uint32_t fx = pvdc_ref_sample(p->src_x, p->src_w, p->dst_w,
                                              flip_x, x - p->dst_x, lo_x, hi_x);
                uint32_t a, fg = pvdc_ref_fetch(t, p, fx, fy, &a);
                uint32_t bg = out[y * MODE_W + x];
                uint32_t res = 0, sa;
                int s;

                if (!pixel_alpha && pa == 255) {
                    out[y * MODE_W + x] = fg;
                    continue;
                }
                /* pixman's OVER: src + dst * (1 - src alpha), saturated */
                sa = pixel_alpha ? mul8(a, pa) : pa;
                for (s = 0; s <= 16; s += 8) {
                    uint32_t c = pvdc_chan(fg, s);

                    if (pixel_alpha && blend == PVDC_BLEND_COVERAGE) {
                        /* premultiplied first, then through plane alpha */
                        c = pa == 255 ? mul8(c, a) : mul8(mul8(c, a), pa);
                    } else {
                        c = mul8(c, pa);
                    }
                    c += mul8(pvdc_chan(bg, s), 255 - sa);
                    res |= MIN(c, 255) << s;
                }
                out[y * MODE_W + x] = res;
            }
        }
    }
}

void pvdc_reference(PVDCCompose *t, const PVDCScene *scene, uint32_t *out)
{
    RefColorDesc d;

    reference_blend(t, scene, out);
    if (!scene->color) {
        return;
    }
    d = ref_color_desc(scene->color);
    for (int i = 0; i < MODE_W * MODE_H; i++) {
        out[i] = ref_color_pixel(&d, out[i]);
    }
}

void pvdc_check_scene(PVDCCompose *t, const PVDCScene *scene)
{
    g_autofree uint32_t *want = g_new(uint32_t, MODE_W * MODE_H);
    uint32_t crc;

    pvdc_commit_scene(t, 0, scene);
    crc = pvdc_next_frame_crc(t, 0);
    pvdc_reference(t, scene, want);
    if (crc != pvdc_frame_crc(want, MODE_W * MODE_H)) {
        g_autofree uint32_t *got = pvdc_screendump_mode(t->p.qts, 0);

        pvdc_assert_pictures_equal(got, want, 0);
        g_assert_cmphex(crc, ==, pvdc_frame_crc(want, MODE_W * MODE_H));
    }
}

/* ------------------------------------------------------------------------ */
/* Scenes and what the consoles show                                        */
/* ------------------------------------------------------------------------ */

void pvdc_scene_add(PVDCScene *scene, PVDCPlane p)
{
    scene->planes[scene->num_planes++] = p;
}

void pvdc_build_cursor(PVDCCompose *t, PVDCScene *scene)
{
    PVDCPlane c = pvdc_scene_plane(t, CURSOR, PVDC_FMT_ARGB8888, 2, 16, 16, 30,
                                   20, 3);

    pvdc_scene_add(scene, pvdc_scene_plane(t, PRIMARY, PVDC_FMT_XRGB8888, 0,
                                           MODE_W, MODE_H, 0, 0, 0));
    pvdc_scene_add(scene, pvdc_scene_plane(t, OVERLAY(0), PVDC_FMT_RGB565, 1,
                                           24, 24, 20, 12, 1));
    c.ctrl = BLEND(PVDC_BLEND_PREMULTI);
    c.hotspot = PVDC_XY(3, 5);
    pvdc_scene_add(scene, c);
}

void pvdc_assert_screen_is(PVDCCompose *t, unsigned int head,
                           const PVDCScene *scene)
{
    g_autofree uint32_t *want = g_new(uint32_t, MODE_W * MODE_H);
    g_autofree uint32_t *got = pvdc_screendump_mode(t->p.qts, head);

    pvdc_reference(t, scene, want);
    pvdc_assert_pictures_equal(got, want, 0);
}

void pvdc_build_two_planes(PVDCCompose *t, PVDCScene *scene)
{
    scene->background = 0x405060;
    pvdc_scene_add(scene, pvdc_scene_plane(t, PRIMARY, PVDC_FMT_XRGB8888, 0,
                                           MODE_W, MODE_H, 0, 0, 0));
    pvdc_scene_add(scene, pvdc_scene_plane(t, OVERLAY(0), PVDC_FMT_XRGB8888, 1,
                                           20, 16, 30, 20, 1));
}

void pvdc_assert_screen_blank(PVDCCompose *t, unsigned int connector)
{
    g_autofree uint32_t *got = NULL;
    int w, h;

    got = pvdc_screendump(t->p.qts, connector, &w, &h);
    g_assert_cmpint(w * h, >, 0);
    g_assert_cmpint(w, !=, MODE_W);
    for (int i = 0; i < w * h; i++) {
        g_assert_cmphex(got[i], ==, 0);
    }
}

void pvdc_show_one_framebuffer(PVDCCompose *t, PVDCScene *scene)
{
    pvdc_scene_add(scene, pvdc_scene_plane(t, PRIMARY, PVDC_FMT_XRGB8888, 0,
                                           MODE_W, MODE_H, 0, 0, 0));
    pvdc_commit_scene(t, 0, scene);
    pvdc_assert_screen_is(t, 0, scene);
}

void pvdc_commit_routed(PVDCCompose *t, unsigned int head, uint32_t connector,
                        const PVDCScene *scene)
{
    pvdc_wr(&t->p, PVDC_HEAD_SHADOW(head) + PVDC_HS_CONNECTOR, connector);
    pvdc_commit_scene(t, head, scene);
}

void pvdc_build_other_two_planes(PVDCCompose *t, PVDCScene *scene)
{
    scene->background = 0x224466;
    pvdc_scene_add(scene, pvdc_scene_plane(t, PRIMARY, PVDC_FMT_XRGB8888, 2,
                                           MODE_W, 40, 0, 8, 0));
    pvdc_scene_add(scene, pvdc_scene_plane(t, OVERLAY(0), PVDC_FMT_RGB565, 3,
                                           24, 16, 10, 4, 1));
}

/* ------------------------------------------------------------------------ */
/* Colour tables and writeback targets                                      */
/* ------------------------------------------------------------------------ */

void pvdc_lut_invert(uint16_t *lut)
{
    for (int ch = 0; ch < 4; ch++) {
        lut[ch] = 0xffff;
        lut[4 + ch] = 0;
    }
}

void pvdc_wb_clear(PVDCCompose *t)
{
    g_autofree uint8_t *buf = g_malloc(WB_SPAN);

    memset(buf, WB_SENTINEL, WB_SPAN);
    qpci_memwrite(t->p.dev, t->p.vram, WB_BASE - WB_GUARD, buf, WB_SPAN);
}

bool pvdc_wb_untouched(const uint8_t *span, size_t from, size_t to)
{
    for (size_t i = from; i < to; i++) {
        if (span[i] != WB_SENTINEL) {
            g_test_message("byte %zd of the target span written", i);
            return false;
        }
    }
    return true;
}

/*
 * An XRGB2101010 pixel @v as 0x00RRGGBB, checking its padding is set and
 * each 10-bit channel is its 8 most significant bits widened exactly, as
 * the spec says: c8 << 2 | c8 >> 6.
 */
static uint32_t wb_2101010(uint32_t v)
{
    uint32_t px = 0;

    g_assert_cmphex(v >> 30, ==, 3);
    for (int shift = 0; shift < 30; shift += 10) {
        uint32_t c10 = v >> shift & 0x3ff, c8 = c10 >> 2;

        g_assert_cmphex(c10, ==, c8 << 2 | c8 >> 6);
        px |= c8 << (shift / 10 * 8);
    }
    return px;
}

uint32_t *pvdc_wb_read(PVDCCompose *t, const PVDCWriteback *wb)
{
    g_autofree uint8_t *span = g_malloc(WB_SPAN);
    uint32_t *px = g_new(uint32_t, MODE_W * MODE_H);
    bool bgr = wb->format == PVDC_FMT_XBGR8888 ||
               wb->format == PVDC_FMT_ABGR8888;
    const uint8_t *target = span + WB_GUARD;

    qpci_memread(t->p.dev, t->p.vram, WB_BASE - WB_GUARD, span, WB_SPAN);
    g_assert_true(pvdc_wb_untouched(span, 0, WB_GUARD));
    for (int y = 0; y < MODE_H; y++) {
        const uint8_t *line = target + (size_t)y * wb->pitch;

        for (int x = 0; x < MODE_W; x++) {
            uint32_t v = ldl_le_p(line + 4 * x);

            if (wb->format == PVDC_FMT_XRGB2101010) {
                px[y * MODE_W + x] = wb_2101010(v);
                continue;
            }
            g_assert_cmphex(v >> 24, ==, 0xff);
            px[y * MODE_W + x] = bgr ? (v & 0xff) << 16 | (v & 0xff00) |
                                       (v >> 16 & 0xff) : v & 0xffffff;
        }
        g_assert_true(pvdc_wb_untouched(span,
                                        WB_GUARD + y * wb->pitch + MODE_PITCH,
                                        WB_GUARD + (y + 1) * wb->pitch));
    }
    g_assert_true(pvdc_wb_untouched(span, WB_GUARD + (MODE_H - 1) * wb->pitch +
                                    MODE_PITCH, WB_SPAN));
    return px;
}

void pvdc_assert_wb_is_the_frame(PVDCCompose *t, const PVDCScene *scene)
{
    g_autofree uint32_t *got = pvdc_wb_read(t, scene->wb);
    g_autofree uint32_t *want = g_new(uint32_t, MODE_W * MODE_H);
    g_autofree uint32_t *shown = NULL;
    uint32_t frame;

    g_assert_cmphex(pvdc_read_crc(&t->p, 0, &frame), ==,
                    pvdc_frame_crc(got, MODE_W * MODE_H));
    g_assert_cmpuint(frame, ==, pvdc_head_ctl(&t->p, 0, PVDC_HEAD_DONE_FRAME));
    shown = pvdc_screendump_mode(t->p.qts, 0);
    pvdc_assert_pictures_equal(got, shown, 0);
    pvdc_reference(t, scene, want);
    pvdc_assert_pictures_equal(got, want, 0);
}

/* The formats a writeback writes: 32-bit RGB. */
const uint32_t pvdc_wb_formats[PVDC_WB_FORMATS] = {
    PVDC_FMT_XRGB8888, PVDC_FMT_ARGB8888, PVDC_FMT_XBGR8888,
    PVDC_FMT_ABGR8888, PVDC_FMT_XRGB2101010,
};
const char *const pvdc_wb_format_names[PVDC_WB_FORMATS] = {
    "xrgb8888", "argb8888", "xbgr8888", "abgr8888", "xrgb2101010",
};
