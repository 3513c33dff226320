/*
 * QTest cases for pvdc composition: what a head shows, pixel by pixel.
 *
 * Framebuffers are written into VRAM with known patterns and committed
 * through the register interface; the CRC the device captures at vblank
 * is compared with the CRC of a picture drawn by the reference composer
 * below, written from the composition rules of docs/specs/pvdc.rst
 * (pixman's 8-bit arithmetic), one pixel at a time.  Bilinear filtering
 * is compared through a screendump, within a stated tolerance; so is a
 * scene on two heads, exactly.
 *
 * Time only moves through the qtest clock; the mode is 64x48 at one
 * frame per millisecond.
 *
 * Copyright (c) 2026 The pvdc authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "pvdc-qtest.h"
#include "pvdc-color-ref.h"

/* Framebuffer k lives at FB_BASE(k) in VRAM; the test keeps a copy. */
#define FB_SPACING          (256 * KiB)
#define FB_BASE(k)          ((uint32_t)(k) * FB_SPACING)
#define FB_SLOTS            8
#define SHADOW_VRAM         (FB_SLOTS * FB_SPACING)
/* The Cb:Cr plane of a two-plane framebuffer, after its Y plane. */
#define CHROMA_AT           (FB_SPACING / 2)
#define CHROMA_BASE(k)      (FB_BASE(k) + CHROMA_AT)

/* Plane slots of a head (PRIMARY, OVERLAY(i), CURSOR), with 3 overlays. */
#define OVERLAYS            3
#define CURSOR              (OVERLAYS + 1)
#define SLOTS               (OVERLAYS + 2)

#define BLEND(mode)         ((uint32_t)(mode) << PVDC_PS_CTRL_BLEND_SHIFT)

typedef struct TPlane {
    unsigned int slot;
    uint32_t format;
    unsigned int fb;            /* framebuffer slot: FB_BASE(fb) */
    uint32_t pitch;
    uint32_t fb_w, fb_h;
    uint32_t src_x, src_y, src_w, src_h;        /* 16.16 */
    int dst_x, dst_y;
    uint32_t dst_w, dst_h;
    uint32_t zpos;
    uint32_t alpha;
    uint32_t ctrl;              /* without ENABLE */
    uint32_t hotspot;
    uint32_t chroma_pitch;      /* NV12, P010: Cb:Cr at CHROMA_BASE(fb) */
} TPlane;

/*
 * A colour pipeline: the stages HS_CTRL enables, and their tables (struct
 * drm_color_lut entries, host order) and matrix, written at COLOR_*.
 */
typedef struct TColor {
    uint32_t stages;            /* PVDC_HS_CTRL_DEGAMMA, _CTM, _GAMMA */
    uint32_t degamma_size, gamma_size;
    uint16_t degamma[4 * PVDC_LUT_MAX_SIZE];
    uint16_t gamma[4 * PVDC_LUT_MAX_SIZE];
    uint64_t ctm[9];
} TColor;

/* Where commit_scene() puts the tables and the matrix, past the fbs. */
#define COLOR_DEGAMMA       (4 * MiB)
#define COLOR_CTM           (COLOR_DEGAMMA + PVDC_LUT_MAX_SIZE * 8)
#define COLOR_GAMMA         (COLOR_CTM + PVDC_CTM_SIZE + 8)

/*
 * A writeback target at WB_BASE: @format, @pitch bytes a line, the whole
 * test mode.  The test checks WB_GUARD bytes either side are untouched.
 */
typedef struct TWriteback {
    uint32_t format;
    uint32_t pitch;
} TWriteback;

#define WB_BASE             (8 * MiB)
#define WB_GUARD            (4 * KiB)
#define WB_MAX_PITCH        (2 * MODE_PITCH)
#define WB_SPAN             (2 * WB_GUARD + WB_MAX_PITCH * MODE_H)
#define WB_SENTINEL         0xa5

typedef struct TScene {
    uint32_t background;
    unsigned int num_planes;
    TPlane planes[SLOTS];
    const TColor *color;        /* NULL: no pipeline */
    const TWriteback *wb;       /* NULL: no writeback */
} TScene;

typedef struct T {
    PVDCTest p;
    uint8_t *shadow;            /* what the test wrote into VRAM */
    bool head_on[2];
} T;

/* ------------------------------------------------------------------------ */
/* Device access                                                            */
/* ------------------------------------------------------------------------ */

static unsigned int plane_index(unsigned int head, unsigned int slot)
{
    return head * SLOTS + slot;
}

/* Every machine: two heads of OVERLAYS overlays, scalers to spare. */
static char *props_with(const char *props)
{
    return g_strdup_printf("heads=2,overlays=%d,scalers=8%s%s", OVERLAYS,
                           props ? "," : "", props ? props : "");
}

static void start_with(T *t, const char *props, const char *extra, bool crc)
{
    g_autofree char *all = props_with(props);

    memset(t, 0, sizeof(*t));
    pvdc_test_start_with(&t->p, all, extra);
    t->shadow = g_malloc0(SHADOW_VRAM);
    for (unsigned int head = 0; crc && head < 2; head++) {
        pvdc_wr(&t->p, PVDC_HEAD_CONTROL(head) + PVDC_HEAD_CRC_CTRL,
                PVDC_CRC_CTRL_ENABLE);
    }
}

static void start(T *t, const char *props, bool crc)
{
    start_with(t, props, NULL, crc);
}

static void stop(T *t)
{
    g_free(t->shadow);
    pvdc_test_stop(&t->p);
}

static void vram_write(T *t, uint32_t offset, const void *buf, size_t len)
{
    g_assert_cmpuint(offset + len, <=, SHADOW_VRAM);
    memcpy(t->shadow + offset, buf, len);
    qpci_memwrite(t->p.dev, t->p.vram, offset, buf, len);
}

static uint64_t compositions(T *t, unsigned int head)
{
    g_autofree char *prop = g_strdup_printf("x-head%u-compositions", head);

    return pvdc_statistic(t->p.qts, prop);
}

/* ------------------------------------------------------------------------ */
/* Commits                                                                  */
/* ------------------------------------------------------------------------ */

static void write_tplane(T *t, unsigned int head, const TPlane *p)
{
    uint64_t base = PVDC_PLANE_SHADOW(plane_index(head, p->slot));

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

/* A LUT of @size entries into VRAM at @offset, little-endian. */
static void write_lut(T *t, uint32_t offset, const uint16_t *lut,
                      uint32_t size)
{
    g_autofree uint16_t *le = g_new(uint16_t, 4 * size);

    for (uint32_t i = 0; i < 4 * size; i++) {
        le[i] = cpu_to_le16(lut[i]);
    }
    qpci_memwrite(t->p.dev, t->p.vram, offset, le, 8 * size);
}

/* The tables and matrix of @c into VRAM, and the head's colour registers. */
static void write_color(T *t, unsigned int head, const TColor *c)
{
    uint64_t hs = PVDC_HEAD_SHADOW(head);
    uint64_t ctm[9];

    write_lut(t, COLOR_DEGAMMA, c->degamma, c->degamma_size);
    write_lut(t, COLOR_GAMMA, c->gamma, c->gamma_size);
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

/*
 * Commit @scene on @head (64x48, enabled) and return the outcome once the
 * device has one: at once for a head being enabled, else at its next
 * vblank.
 */
static uint32_t try_commit_scene(T *t, unsigned int head,
                                 const TScene *scene)
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
        write_color(t, head, scene->color);
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
        pvdc_wr(&t->p, PVDC_PLANE_SHADOW(plane_index(head, i)) + PVDC_PS_CTRL,
                0);
    }
    for (i = 0; i < scene->num_planes; i++) {
        write_tplane(t, head, &scene->planes[i]);
    }

    result = pvdc_commit(&t->p, head);
    t->head_on[head] |= result == PVDC_RESULT_APPLIED;
    return result;
}

/* Make @scene the active state of @head (try_commit_scene()). */
static void commit_scene(T *t, unsigned int head, const TScene *scene)
{
    g_assert_cmphex(try_commit_scene(t, head, scene), ==,
                    PVDC_RESULT_APPLIED);
}

/* The CRC of the frame that starts at the next vblank of @head. */
static uint32_t next_frame_crc(T *t, unsigned int head)
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

/* Bytes per pixel of the (Y) plane. */
static uint32_t format_cpp(uint32_t format)
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

/* Bytes per Cb:Cr sample of the two-plane formats, else 0. */
static uint32_t chroma_bps(uint32_t format)
{
    return format == PVDC_FMT_NV12 ? 2 : format == PVDC_FMT_P010 ? 4 : 0;
}

static bool is_ycbcr(uint32_t format)
{
    return format == PVDC_FMT_YUYV || chroma_bps(format);
}

static uint32_t noise(uint32_t seed, uint32_t x, uint32_t y)
{
    uint32_t v = seed * 0x9e3779b9u ^ x * 0x85ebca6bu ^ y * 0xc2b2ae35u;

    v ^= v >> 15;
    v *= 0x2c1b3c6du;
    v ^= v >> 12;
    v *= 0x297a2d39u;
    return v ^ v >> 15;
}

/*
 * Fill @h lines of @w units of @cpp bytes, @pitch bytes apart, at VRAM
 * @offset with pattern @seed.
 */
static void fill_lines(T *t, uint32_t offset, uint32_t pitch, uint32_t cpp,
                       uint32_t w, uint32_t h, uint32_t seed)
{
    g_autofree uint8_t *buf = g_malloc0((size_t)pitch * h);
    uint32_t x, y;

    for (y = 0; y < h; y++) {
        uint8_t *line = buf + (size_t)y * pitch;

        for (x = 0; x < w; x++) {
            uint32_t v = noise(seed, x, y);

            if (cpp == 4) {
                stl_le_p(line + x * 4, v);
            } else if (cpp == 2) {
                stw_le_p(line + x * 2, v);
            } else {
                line[x] = v;
            }
        }
    }
    vram_write(t, offset, buf, (size_t)pitch * h);
}

/*
 * Fill framebuffer @fb (@w x @h in @format) with pattern @seed, and the
 * Cb:Cr plane of two-plane formats (its pitch in @chroma_pitch).  Returns
 * the pitch.
 */
static uint32_t fill_fb_aligned(T *t, unsigned int fb, uint32_t format,
                                uint32_t w, uint32_t h, uint32_t seed,
                                uint32_t align, uint32_t *chroma_pitch)
{
    uint32_t cpp = format_cpp(format), bps = chroma_bps(format);
    uint32_t pitch = ROUND_UP(w * cpp, align);

    g_assert_cmpuint((size_t)pitch * h, <=, bps ? CHROMA_AT : FB_SPACING);
    fill_lines(t, FB_BASE(fb), pitch, cpp, w, h, seed);
    if (bps) {
        uint32_t cw = DIV_ROUND_UP(w, 2), ch = DIV_ROUND_UP(h, 2);
        uint32_t cpitch = ROUND_UP(cw * bps, align);

        g_assert_cmpuint((size_t)cpitch * ch, <=, FB_SPACING - CHROMA_AT);
        /* a sample is 2 or 4 bytes: written as units of that size */
        fill_lines(t, CHROMA_BASE(fb), cpitch, bps, cw, ch, seed ^ 0x5a5a);
        *chroma_pitch = cpitch;
    }
    return pitch;
}

/* As fill_fb_aligned(), lines 64-byte aligned like a guest's dumb buffers. */
static uint32_t fill_fb(T *t, unsigned int fb, uint32_t format, uint32_t w,
                        uint32_t h, uint32_t seed, uint32_t *chroma_pitch)
{
    return fill_fb_aligned(t, fb, format, w, h, seed, 64, chroma_pitch);
}

/* A smooth pattern, for filtering: neighbours differ by at most 16. */
static uint32_t fill_gradient(T *t, unsigned int fb, uint32_t w, uint32_t h)
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
    vram_write(t, FB_BASE(fb), buf, (size_t)pitch * h);
    return pitch;
}

/* A plane showing all of framebuffer @fb unscaled at (@x, @y). */
static TPlane plane(T *t, unsigned int slot, uint32_t format, unsigned int fb,
                    uint32_t w, uint32_t h, int x, int y, uint32_t zpos)
{
    TPlane p = {
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

    p.pitch = fill_fb(t, fb, format, w, h, fb * 7919 + format,
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

static uint32_t chan(uint32_t v, int shift)
{
    return (v >> shift) & 0xff;
}

static uint32_t clamp8(int64_t v)
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
    return clamp8(r >> 19) << 16 | clamp8(g >> 19) << 8 | clamp8(b >> 19);
}

/* Component @c (0: Cb, 1: Cr) of Cb:Cr sample (@j, @k) of @p. */
static int chroma_sample(T *t, const TPlane *p, int64_t j, int64_t k, int c)
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
static uint32_t fetch_two_plane(T *t, const TPlane *p, const uint8_t *line,
                                uint32_t x, uint32_t y)
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

/* Pixel (@x, @y) of the framebuffer of @p: colour, and alpha in @alpha. */
static uint32_t fetch(T *t, const TPlane *p, uint32_t x, uint32_t y,
                      uint32_t *alpha)
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
        return chan(v, 0) << 16 | chan(v, 8) << 8 | chan(v, 16);
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

/*
 * The framebuffer pixel, along one axis, that destination pixel @d of a
 * plane samples with nearest filtering: the source rectangle mapped onto
 * the destination with the scale rounded to 16.16, sampled at the pixel
 * centre, exact halves rounding down, clamped to the source rectangle
 * rounded out to whole pixels (@lo, @hi).
 */
static uint32_t sample(uint32_t src, uint32_t src_size, uint32_t dst_size,
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
static RefColorDesc ref_color_desc(const TColor *c)
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

static void reference_blend(T *t, const TScene *scene, uint32_t *out);

/* Draw @scene into @out (MODE_W x MODE_H, 0x00RRGGBB). */
static void reference(T *t, const TScene *scene, uint32_t *out)
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

/* @scene without its colour pipeline. */
static void reference_blend(T *t, const TScene *scene, uint32_t *out)
{
    const TPlane *order[SLOTS];
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
        const TPlane *p = order[i];
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
            uint32_t fy = sample(p->src_y, p->src_h, p->dst_h, flip_y,
                                 y - p->dst_y, lo_y, hi_y);

            for (x = MAX(p->dst_x, 0);
                 x < MIN(p->dst_x + (int)p->dst_w, MODE_W); x++) {
                uint32_t fx = sample(p->src_x, p->src_w, p->dst_w, flip_x,
                                     x - p->dst_x, lo_x, hi_x);
                uint32_t a, fg = fetch(t, p, fx, fy, &a);
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
                    uint32_t c = chan(fg, s);

                    if (pixel_alpha && blend == PVDC_BLEND_COVERAGE) {
                        /* premultiplied first, then through plane alpha */
                        c = pa == 255 ? mul8(c, a) : mul8(mul8(c, a), pa);
                    } else {
                        c = mul8(c, pa);
                    }
                    c += mul8(chan(bg, s), 255 - sa);
                    res |= MIN(c, 255) << s;
                }
                out[y * MODE_W + x] = res;
            }
        }
    }
}

static void assert_pictures_equal(const uint32_t *got, const uint32_t *want,
                                  int tolerance)
{
    for (int i = 0; i < MODE_W * MODE_H; i++) {
        for (int s = 0; s <= 16; s += 8) {
            int d = (int)chan(got[i], s) - (int)chan(want[i], s);

            if (abs(d) > tolerance) {
                g_test_message("pixel (%d, %d): got 0x%06x, want 0x%06x",
                               i % MODE_W, i / MODE_W, got[i], want[i]);
                g_assert_cmpint(abs(d), <=, tolerance);
            }
        }
    }
}

/*
 * Show @scene on head 0 and check the CRC of its next frame against the
 * reference; on a mismatch, find the first wrong pixel in a screendump.
 */
static void check_scene(T *t, const TScene *scene)
{
    g_autofree uint32_t *want = g_new(uint32_t, MODE_W * MODE_H);
    uint32_t crc;

    commit_scene(t, 0, scene);
    crc = next_frame_crc(t, 0);
    reference(t, scene, want);
    if (crc != pvdc_frame_crc(want, MODE_W * MODE_H)) {
        g_autofree uint32_t *got = NULL;
        int w, h;

        got = pvdc_screendump(t->p.qts, 0, &w, &h);
        g_assert_cmpint(w, ==, MODE_W);
        g_assert_cmpint(h, ==, MODE_H);
        assert_pictures_equal(got, want, 0);
        g_assert_cmphex(crc, ==, pvdc_frame_crc(want, MODE_W * MODE_H));
    }
}

/* ------------------------------------------------------------------------ */
/* CRC cases: one scene each                                                */
/* ------------------------------------------------------------------------ */

typedef struct SceneCase {
    const char *name;
    void (*build)(T *t, TScene *scene, const void *arg);
    const void *arg;
} SceneCase;

static void add(TScene *scene, TPlane p)
{
    scene->planes[scene->num_planes++] = p;
}

/* The format under test shown twice: full screen and as a partial plane. */
static void build_format(T *t, TScene *scene, const void *arg)
{
    uint32_t format = *(const uint32_t *)arg;
    bool yuv = is_ycbcr(format);
    TPlane p;

    scene->background = 0x203040;
    if (!yuv) {
        add(scene, plane(t, PRIMARY, format, 0, MODE_W, MODE_H, 0, 0, 0));
    }
    p = plane(t, OVERLAY(0), format, 1, 30, 20, 9, 11, 1);
    if (format == PVDC_FMT_ARGB8888 || format == PVDC_FMT_ABGR8888) {
        p.ctrl = BLEND(PVDC_BLEND_PREMULTI);
    }
    add(scene, p);
}

/*
 * The format under test at the smallest pitch there is, a line in whole
 * 32-bit words (what PITCH_ALIGN asks), at the size of issue 35's 72x72
 * NV12 buffer, whose Y and Cb:Cr pitches are 72, none a multiple of 64:
 * clipped by the head, past its right and bottom edges.
 */
static void build_tight_pitch(T *t, TScene *scene, const void *arg)
{
    uint32_t format = *(const uint32_t *)arg;
    TPlane p = plane(t, OVERLAY(0), format, 1, 72, 72, -3, -5, 1);

    p.pitch = fill_fb_aligned(t, p.fb, format, p.fb_w, p.fb_h, 35,
                              sizeof(uint32_t), &p.chroma_pitch);
    g_assert_cmpuint(p.pitch % 64, !=, 0);
    scene->background = 0x302010;
    add(scene, p);
}

/* An ARGB8888 overlay with random alpha over an opaque primary. */
static void build_blend(T *t, TScene *scene, const void *arg)
{
    uint32_t mode = *(const uint32_t *)arg;
    TPlane p;

    add(scene, plane(t, PRIMARY, PVDC_FMT_XRGB8888, 0, MODE_W, MODE_H,
                     0, 0, 0));
    p = plane(t, OVERLAY(0), PVDC_FMT_ARGB8888, 1, 40, 30, 12, 9, 1);
    p.ctrl = BLEND(mode);
    add(scene, p);
}

/* The blend modes again, the plane translucent (alpha about 1/2). */
static void build_plane_alpha(T *t, TScene *scene, const void *arg)
{
    build_blend(t, scene, arg);
    scene->planes[1].alpha = 0x8000;
    /* and a plane with alpha 0, which must not show at all */
    add(scene, plane(t, OVERLAY(1), PVDC_FMT_XRGB8888, 2, 20, 20, 0, 0, 2));
    scene->planes[2].alpha = 0;
}

/* Three overlapping planes, stacked in the order @arg gives. */
static void build_zpos(T *t, TScene *scene, const void *arg)
{
    const uint32_t *z = arg;

    scene->background = 0x102030;
    add(scene, plane(t, OVERLAY(0), PVDC_FMT_XRGB8888, 0, 30, 30, 4, 4, z[0]));
    add(scene, plane(t, OVERLAY(1), PVDC_FMT_XBGR8888, 1, 30, 30, 14, 10,
                     z[1]));
    add(scene, plane(t, OVERLAY(2), PVDC_FMT_RGB565, 2, 30, 30, 24, 16,
                     z[2]));
}

typedef struct ScaleArg {
    uint32_t format;
    uint32_t src_x, src_y, src_w, src_h;   /* 16.16 */
    uint32_t fb_w, fb_h;
    int dst_x, dst_y;
    uint32_t dst_w, dst_h;
    uint32_t ctrl;
} ScaleArg;

static void build_scaled(T *t, TScene *scene, const void *arg)
{
    const ScaleArg *a = arg;
    TPlane p = plane(t, OVERLAY(0), a->format, 0, a->fb_w, a->fb_h, a->dst_x,
                     a->dst_y, 0);

    scene->background = 0x00ff00;
    p.src_x = a->src_x;
    p.src_y = a->src_y;
    p.src_w = a->src_w;
    p.src_h = a->src_h;
    p.dst_w = a->dst_w;
    p.dst_h = a->dst_h;
    p.ctrl = a->ctrl;
    add(scene, p);
}

/*
 * A YCbCr format in an encoding and range (@arg: format, then the PS_CTRL
 * bits): an odd-sized framebuffer shown whole, and one shown from an odd
 * corner, scaled up, reflected.
 */
static void build_ycbcr(T *t, TScene *scene, const void *arg)
{
    const uint32_t *a = arg;
    bool even = a[0] == PVDC_FMT_YUYV;
    TPlane p = plane(t, OVERLAY(0), a[0], 0, even ? 34 : 33, 21, 3, 4, 0);

    scene->background = 0x304050;
    p.ctrl = a[1];
    add(scene, p);
    p = plane(t, OVERLAY(1), a[0], 1, 40, 30, 20, 14, 1);
    p.ctrl = a[1] | PVDC_PS_CTRL_REFLECT_X;
    p.src_x = FP16(3);
    p.src_y = FP16(5);
    p.src_w = FP16(21);
    p.src_h = FP16(13);
    p.dst_w = 40;
    p.dst_h = 30;
    add(scene, p);
}

/* A cursor with random alpha over an overlay over the primary. */
static void build_cursor(T *t, TScene *scene, const void *arg)
{
    TPlane c = plane(t, CURSOR, PVDC_FMT_ARGB8888, 2, 16, 16, 30, 20, 3);

    add(scene, plane(t, PRIMARY, PVDC_FMT_XRGB8888, 0, MODE_W, MODE_H,
                     0, 0, 0));
    add(scene, plane(t, OVERLAY(0), PVDC_FMT_RGB565, 1, 24, 24, 20, 12, 1));
    c.ctrl = BLEND(PVDC_BLEND_PREMULTI);
    c.hotspot = PVDC_XY(3, 5);
    add(scene, c);
}

static const uint32_t fmt_xrgb8888 = PVDC_FMT_XRGB8888;
static const uint32_t fmt_argb8888 = PVDC_FMT_ARGB8888;
static const uint32_t fmt_xbgr8888 = PVDC_FMT_XBGR8888;
static const uint32_t fmt_abgr8888 = PVDC_FMT_ABGR8888;
static const uint32_t fmt_rgb565 = PVDC_FMT_RGB565;
static const uint32_t fmt_xrgb2101010 = PVDC_FMT_XRGB2101010;
static const uint32_t fmt_yuyv = PVDC_FMT_YUYV;
static const uint32_t fmt_nv12 = PVDC_FMT_NV12;
static const uint32_t fmt_p010 = PVDC_FMT_P010;
static const uint32_t blend_none = PVDC_BLEND_NONE;
static const uint32_t blend_premulti = PVDC_BLEND_PREMULTI;
static const uint32_t blend_coverage = PVDC_BLEND_COVERAGE;
static const uint32_t zpos_012[3] = { 0, 1, 2 };
static const uint32_t zpos_201[3] = { 2, 0, 1 };
static const uint32_t zpos_120[3] = { 1, 2, 0 };

#define SCALE(fmt, fw, fh, sx, sy, sw, sh, dx, dy, dw, dh, c) \
    (&(const ScaleArg) { fmt, sx, sy, sw, sh, fw, fh, dx, dy, dw, dh, c })
#define WHOLE(fmt, fw, fh, dx, dy, dw, dh, c) \
    SCALE(fmt, fw, fh, 0, 0, FP16(fw), FP16(fh), dx, dy, dw, dh, c)
#define ENCODING(e)         ((uint32_t)(e) << PVDC_PS_CTRL_COLOR_ENCODING_SHIFT)
#define YCBCR(fmt, enc, range) \
    ((const uint32_t[]) { fmt, ENCODING(enc) | (range) })
#define FULL                PVDC_PS_CTRL_COLOR_RANGE_FULL

static const SceneCase scene_cases[] = {
    { "format/xrgb8888", build_format, &fmt_xrgb8888 },
    { "format/argb8888", build_format, &fmt_argb8888 },
    { "format/xbgr8888", build_format, &fmt_xbgr8888 },
    { "format/abgr8888", build_format, &fmt_abgr8888 },
    { "format/rgb565", build_format, &fmt_rgb565 },
    { "format/xrgb2101010", build_format, &fmt_xrgb2101010 },
    { "format/yuyv", build_format, &fmt_yuyv },
    { "format/nv12", build_format, &fmt_nv12 },
    { "format/p010", build_format, &fmt_p010 },
    { "pitch/xrgb8888-of-a-line", build_tight_pitch, &fmt_xrgb8888 },
    { "pitch/rgb565-of-a-line", build_tight_pitch, &fmt_rgb565 },
    { "pitch/yuyv-of-a-line", build_tight_pitch, &fmt_yuyv },
    { "pitch/nv12-of-a-line", build_tight_pitch, &fmt_nv12 },
    { "pitch/p010-of-a-line", build_tight_pitch, &fmt_p010 },
    { "ycbcr/yuyv-bt709-full", build_ycbcr,
      YCBCR(PVDC_FMT_YUYV, PVDC_COLOR_BT709, FULL) },
    { "ycbcr/yuyv-bt2020-limited", build_ycbcr,
      YCBCR(PVDC_FMT_YUYV, PVDC_COLOR_BT2020, 0) },
    { "ycbcr/xrgb8888-ignores-the-encoding", build_ycbcr,
      YCBCR(PVDC_FMT_XRGB8888, PVDC_COLOR_BT2020, FULL) },
    { "blend/none-ignores-pixel-alpha", build_blend, &blend_none },
    { "blend/premultiplied", build_blend, &blend_premulti },
    { "blend/coverage", build_blend, &blend_coverage },
    { "plane-alpha/none", build_plane_alpha, &blend_none },
    { "plane-alpha/premultiplied", build_plane_alpha, &blend_premulti },
    { "plane-alpha/coverage", build_plane_alpha, &blend_coverage },
    { "zpos/0-1-2", build_zpos, zpos_012 },
    { "zpos/2-0-1", build_zpos, zpos_201 },
    { "zpos/1-2-0", build_zpos, zpos_120 },
    { "nearest/upscale-2x", build_scaled,
      WHOLE(PVDC_FMT_XRGB8888, 20, 16, 4, 4, 40, 32, 0) },
    { "nearest/downscale-2x", build_scaled,
      WHOLE(PVDC_FMT_XRGB8888, 64, 48, 8, 8, 32, 24, 0) },
    { "nearest/odd-ratios", build_scaled,
      WHOLE(PVDC_FMT_XBGR8888, 24, 40, 3, 5, 57, 13, 0) },
    { "nearest/fractional-source", build_scaled,
      SCALE(PVDC_FMT_XRGB8888, 40, 40, 0x28000, 0x14000, 0x1a8000, 0x104000,
            2, 3, 50, 37, 0) },
    { "nearest/fractional-source-unscaled", build_scaled,
      SCALE(PVDC_FMT_XRGB8888, 40, 40, 0x18000, 0x8000, FP16(30), FP16(20),
            2, 3, 30, 20, 0) },
    { "nearest/rgb565-odd-source-x", build_scaled,
      SCALE(PVDC_FMT_RGB565, 40, 30, FP16(3), FP16(1), FP16(21), FP16(17),
            5, 6, 44, 31, 0) },
    { "nearest/yuyv-upscale", build_scaled,
      SCALE(PVDC_FMT_YUYV, 20, 16, FP16(1), FP16(2), FP16(15), FP16(12),
            1, 1, 60, 45, 0) },
    { "nearest/nv12-fractional-odd-source", build_scaled,
      SCALE(PVDC_FMT_NV12, 31, 23, 0x38000, 0x18000, 0x108000, 0xc4000,
            2, 3, 57, 41, 0) },
    { "nearest/p010-rotated-downscale", build_scaled,
      SCALE(PVDC_FMT_P010, 63, 47, FP16(1), FP16(1), FP16(61), FP16(45),
            3, 2, 29, 19, PVDC_PS_CTRL_ROTATE_180) },
    { "transform/rotate-180", build_scaled,
      WHOLE(PVDC_FMT_XRGB8888, 30, 20, 5, 7, 30, 20,
            PVDC_PS_CTRL_ROTATE_180) },
    { "transform/reflect-x", build_scaled,
      WHOLE(PVDC_FMT_XRGB8888, 30, 20, 5, 7, 30, 20,
            PVDC_PS_CTRL_REFLECT_X) },
    { "transform/reflect-y", build_scaled,
      WHOLE(PVDC_FMT_XRGB8888, 30, 20, 5, 7, 30, 20,
            PVDC_PS_CTRL_REFLECT_Y) },
    { "transform/rotate-180-and-reflect-x-is-reflect-y", build_scaled,
      WHOLE(PVDC_FMT_XRGB8888, 30, 20, 5, 7, 30, 20,
            PVDC_PS_CTRL_ROTATE_180 | PVDC_PS_CTRL_REFLECT_X) },
    { "transform/rotate-180-scaled-and-clipped", build_scaled,
      SCALE(PVDC_FMT_RGB565, 32, 24, FP16(3), FP16(2), FP16(20), FP16(14),
            -7, 30, 50, 35, PVDC_PS_CTRL_ROTATE_180) },
    { "transform/reflect-x-yuyv", build_scaled,
      SCALE(PVDC_FMT_YUYV, 32, 24, FP16(1), 0, FP16(25), FP16(24),
            10, 10, 25, 24, PVDC_PS_CTRL_REFLECT_X) },
    { "clip/left", build_scaled,
      WHOLE(PVDC_FMT_XRGB8888, 30, 20, -13, 10, 30, 20, 0) },
    { "clip/top", build_scaled,
      WHOLE(PVDC_FMT_XRGB8888, 30, 20, 10, -9, 30, 20, 0) },
    { "clip/right", build_scaled,
      WHOLE(PVDC_FMT_XRGB8888, 30, 20, 50, 10, 30, 20, 0) },
    { "clip/bottom", build_scaled,
      WHOLE(PVDC_FMT_XRGB8888, 30, 20, 10, 40, 30, 20, 0) },
    { "clip/every-edge", build_scaled,
      WHOLE(PVDC_FMT_XRGB8888, 80, 60, -8, -6, 80, 60, 0) },
    { "clip/every-edge-scaled-and-reflected", build_scaled,
      WHOLE(PVDC_FMT_XBGR8888, 40, 30, -11, -7, 90, 65,
            PVDC_PS_CTRL_REFLECT_Y) },
    { "clip/entirely-off-screen", build_scaled,
      WHOLE(PVDC_FMT_XRGB8888, 30, 20, -40, 60, 30, 20, 0) },
    { "cursor/over-an-overlay", build_cursor, NULL },
};

/*
 * The two-plane formats in every encoding and range: main() makes their
 * cases, "ycbcr/FORMAT-ENCODING-RANGE".
 */
static const uint32_t two_plane_formats[] = { PVDC_FMT_NV12, PVDC_FMT_P010 };
static const char *const two_plane_names[] = { "nv12", "p010" };
static const char *const encoding_names[] = {
    [PVDC_COLOR_BT601] = "bt601",
    [PVDC_COLOR_BT709] = "bt709",
    [PVDC_COLOR_BT2020] = "bt2020",
};
#define YCBCR_MATRIX \
    (ARRAY_SIZE(two_plane_formats) * ARRAY_SIZE(encoding_names) * 2)
static uint32_t ycbcr_matrix_args[YCBCR_MATRIX][2];
static SceneCase ycbcr_matrix_cases[YCBCR_MATRIX];

static void test_scene_crc(const void *opaque)
{
    const SceneCase *c = opaque;
    TScene scene = {};
    T t;

    start(&t, NULL, true);
    c->build(&t, &scene, c->arg);
    check_scene(&t, &scene);
    stop(&t);
}

/* ------------------------------------------------------------------------ */
/* Screendumps                                                              */
/* ------------------------------------------------------------------------ */

static double bilinear_channel(T *t, const TPlane *p, double u, double v,
                               int s)
{
    int64_t lo_x = p->src_x >> 16, lo_y = p->src_y >> 16;
    int64_t hi_x = DIV_ROUND_UP((uint64_t)p->src_x + p->src_w, 1 << 16) - 1;
    int64_t hi_y = DIV_ROUND_UP((uint64_t)p->src_y + p->src_h, 1 << 16) - 1;
    int64_t x0 = (int64_t)u - (u < (int64_t)u);
    int64_t y0 = (int64_t)v - (v < (int64_t)v);
    double fx = u - x0, fy = v - y0;
    double acc = 0;
    uint32_t a;

    for (int j = 0; j < 2; j++) {
        for (int i = 0; i < 2; i++) {
            int64_t x = MIN(MAX(x0 + i, lo_x), hi_x);
            int64_t y = MIN(MAX(y0 + j, lo_y), hi_y);
            double w = (i ? fx : 1 - fx) * (j ? fy : 1 - fy);

            acc += w * chan(fetch(t, p, x, y, &a), s);
        }
    }
    return acc;
}

/*
 * Bilinear filtering, upscaled 4x: every pixel within 2 of the ideal
 * filter (pixman interpolates with 7-bit weights and rounds the scale).
 */
static void test_bilinear_upscale_is_within_tolerance(void)
{
    g_autofree uint32_t *got = NULL;
    g_autofree uint32_t *want = g_new(uint32_t, MODE_W * MODE_H);
    TScene scene = { .background = 0 };
    TPlane p;
    int w, h;
    T t;

    start(&t, NULL, false);
    p = plane(&t, PRIMARY, PVDC_FMT_XRGB8888, 0, 16, 12, 0, 0, 0);
    p.pitch = fill_gradient(&t, 0, 16, 12);
    p.dst_w = MODE_W;
    p.dst_h = MODE_H;
    p.ctrl = PVDC_PS_CTRL_FILTER_BILINEAR;
    add(&scene, p);
    commit_scene(&t, 0, &scene);

    for (int y = 0; y < MODE_H; y++) {
        for (int x = 0; x < MODE_W; x++) {
            double u = (x + 0.5) * 16 / MODE_W - 0.5;
            double v = (y + 0.5) * 12 / MODE_H - 0.5;
            uint32_t px = 0;

            for (int s = 0; s <= 16; s += 8) {
                px |= clamp8(bilinear_channel(&t, &p, u, v, s) + 0.5) << s;
            }
            want[y * MODE_W + x] = px;
        }
    }
    got = pvdc_screendump(t.p.qts, 0, &w, &h);
    g_assert_cmpint(w, ==, MODE_W);
    g_assert_cmpint(h, ==, MODE_H);
    assert_pictures_equal(got, want, 2);
    stop(&t);
}

/* Two heads, four planes each, as screendumps show them: exact. */
static void test_two_heads_match_pixel_by_pixel(void)
{
    g_autofree uint32_t *want = g_new(uint32_t, MODE_W * MODE_H);
    TScene scene[2] = { { .background = 0x123456 },
                        { .background = 0x654321 } };
    T t;

    start(&t, NULL, false);
    for (unsigned int h = 0; h < 2; h++) {
        TPlane o;

        add(&scene[h], plane(&t, PRIMARY, PVDC_FMT_XRGB8888, 4 * h + 0,
                             MODE_W, 40, 0, 4, 0));
        o = plane(&t, OVERLAY(0), PVDC_FMT_ARGB8888, 4 * h + 1, 30, 20,
                  10 + h, 5, 2);
        o.ctrl = BLEND(PVDC_BLEND_COVERAGE);
        add(&scene[h], o);
        o = plane(&t, OVERLAY(1), PVDC_FMT_RGB565, 4 * h + 2, 20, 20,
                  40, 20 + h, 1);
        o.dst_w = 30;
        o.ctrl = PVDC_PS_CTRL_REFLECT_X;
        add(&scene[h], o);
        o = plane(&t, CURSOR, PVDC_FMT_ARGB8888, 4 * h + 3, 8, 8,
                  58, -3, 3);
        o.ctrl = BLEND(PVDC_BLEND_PREMULTI);
        add(&scene[h], o);
        commit_scene(&t, h, &scene[h]);
    }
    for (unsigned int h = 0; h < 2; h++) {
        g_autofree uint32_t *got = NULL;
        int w, hh;

        got = pvdc_screendump(t.p.qts, h, &w, &hh);
        g_assert_cmpint(w, ==, MODE_W);
        g_assert_cmpint(hh, ==, MODE_H);
        reference(&t, &scene[h], want);
        assert_pictures_equal(got, want, 0);
    }
    stop(&t);
}

/* ------------------------------------------------------------------------ */
/* Dirty tracking                                                           */
/* ------------------------------------------------------------------------ */

static void assert_screen_is(T *t, unsigned int head, const TScene *scene)
{
    g_autofree uint32_t *want = g_new(uint32_t, MODE_W * MODE_H);
    g_autofree uint32_t *got = NULL;
    int w, h;

    got = pvdc_screendump(t->p.qts, head, &w, &h);
    g_assert_cmpint(w, ==, MODE_W);
    g_assert_cmpint(h, ==, MODE_H);
    reference(t, scene, want);
    assert_pictures_equal(got, want, 0);
}

static void build_two_planes(T *t, TScene *scene)
{
    scene->background = 0x405060;
    add(scene, plane(t, PRIMARY, PVDC_FMT_XRGB8888, 0, MODE_W, MODE_H,
                     0, 0, 0));
    add(scene, plane(t, OVERLAY(0), PVDC_FMT_XRGB8888, 1, 20, 16, 30, 20, 1));
}

/* Console @connector shows what no head drives: a black picture. */
static void assert_screen_blank(T *t, unsigned int connector)
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

/* A disabled head shows a small black picture, composed from nothing. */
static void test_disabled_head_is_blank(void)
{
    TScene scene = {};
    T t;

    start(&t, NULL, false);
    build_two_planes(&t, &scene);
    commit_scene(&t, 0, &scene);
    assert_screen_blank(&t, 1);
    g_assert_cmpuint(compositions(&t, 1), ==, 0);
    stop(&t);
}

static void test_idle_guest_costs_no_composition(void)
{
    TScene scene = {};
    uint64_t n;
    T t;

    start(&t, NULL, false);
    build_two_planes(&t, &scene);
    commit_scene(&t, 0, &scene);
    assert_screen_is(&t, 0, &scene);
    n = compositions(&t, 0);
    g_assert_cmpuint(n, ==, 1);

    for (int i = 0; i < 5; i++) {
        pvdc_step_to(&t.p, t.p.now + 10 * SCALE_MS);
        assert_screen_is(&t, 0, &scene);
    }
    g_assert_cmpuint(compositions(&t, 0), ==, n);

    /* a commit that changes nothing visible costs nothing either */
    commit_scene(&t, 0, &scene);
    assert_screen_is(&t, 0, &scene);
    g_assert_cmpuint(compositions(&t, 0), ==, n);
    g_assert_cmpuint(compositions(&t, 1), ==, 0);
    g_assert_cmpuint(pvdc_statistic(t.p.qts, "x-compositions"), ==, n);
    stop(&t);
}

typedef struct Rect {
    int x, y, width, height;
} Rect;

/* The rectangle of the last composition the trace in @log reports. */
static void last_composition(const char *log, Rect *rect)
{
    g_autofree char *text = NULL;
    const char *line = NULL, *p;
    unsigned int head;

    g_assert(g_file_get_contents(log, &text, NULL, NULL));
    for (p = text; (p = strstr(p, "pvdc_compose ")); p++) {
        line = p;
    }
    g_assert_nonnull(line);
    g_assert_cmpint(sscanf(line, "pvdc_compose head %u rect %d,%d %dx%d",
                           &head, &rect->x, &rect->y, &rect->width,
                           &rect->height), ==, 5);
}

static void assert_rect_holds(const Rect *rect, int x, int y)
{
    g_assert_cmpint(rect->x, <=, x);
    g_assert_cmpint(rect->y, <=, y);
    g_assert_cmpint(rect->x + rect->width, >, x);
    g_assert_cmpint(rect->y + rect->height, >, y);
}

/*
 * A write under a visible plane is composed once, and only the part of
 * the head the written pages show (the trace says which part).
 */
static void test_vram_write_recomposes_what_it_touched(void)
{
    g_autofree char *dir = g_dir_make_tmp("pvdc-compose-XXXXXX", NULL);
    g_autofree char *log = g_strdup_printf("%s/trace.log", dir);
    g_autofree char *extra = g_strdup_printf("-d trace:pvdc_compose -D %s",
                                             log);
    TScene scene = {};
    uint32_t pixel = 0x00abcdef;
    Rect rect;
    uint64_t n;
    T t;

    start_with(&t, NULL, extra, false);
    build_two_planes(&t, &scene);
    commit_scene(&t, 0, &scene);
    assert_screen_is(&t, 0, &scene);
    n = compositions(&t, 0);
    last_composition(log, &rect);
    g_assert_cmpint(rect.width * rect.height, ==, MODE_W * MODE_H);

    /* under the overlay at (30, 20): the new pixel shows */
    vram_write(&t, FB_BASE(1) + 5 * scene.planes[1].pitch + 7 * 4, &pixel,
               4);
    assert_screen_is(&t, 0, &scene);
    g_assert_cmpuint(compositions(&t, 0), ==, n + 1);
    last_composition(log, &rect);
    assert_rect_holds(&rect, 37, 25);
    g_assert_cmpint(rect.width * rect.height, <=, 20 * 16);

    /* the primary's line 40: a band of lines of the head, not all of it */
    vram_write(&t, FB_BASE(0) + 40 * scene.planes[0].pitch + 3 * 4, &pixel,
               4);
    assert_screen_is(&t, 0, &scene);
    g_assert_cmpuint(compositions(&t, 0), ==, n + 2);
    last_composition(log, &rect);
    assert_rect_holds(&rect, 3, 40);
    g_assert_cmpint(rect.height, <, MODE_H);

    /* VRAM no plane shows: nothing to do */
    vram_write(&t, FB_BASE(5) + 100, &pixel, 4);
    assert_screen_is(&t, 0, &scene);
    g_assert_cmpuint(compositions(&t, 0), ==, n + 2);
    stop(&t);
    unlink(log);
    rmdir(dir);
}

/*
 * A full-screen XRGB8888 primary of framebuffer 0 in @scene, committed on
 * head 0: it is on the screen.
 */
static void show_one_framebuffer(T *t, TScene *scene)
{
    add(scene, plane(t, PRIMARY, PVDC_FMT_XRGB8888, 0, MODE_W, MODE_H,
                     0, 0, 0));
    commit_scene(t, 0, scene);
    assert_screen_is(t, 0, scene);
}

/* One full-screen XRGB8888 plane is shown from VRAM: no composition. */
static void test_direct_scanout_needs_no_composition(void)
{
    TScene scene = {};
    uint32_t pixel = 0x00fedcba;
    T t;

    start(&t, NULL, false);
    show_one_framebuffer(&t, &scene);
    vram_write(&t, FB_BASE(0) + 17 * scene.planes[0].pitch + 3 * 4, &pixel,
               4);
    assert_screen_is(&t, 0, &scene);
    g_assert_cmpuint(compositions(&t, 0), ==, 0);
    stop(&t);
}

/*
 * A YCbCr plane covering the head alone is never shown from VRAM, and a
 * write to its Cb:Cr plane alone is composed again.
 */
static void test_ycbcr_is_composed_and_its_chroma_tracked(void)
{
    static const uint32_t formats[] = { PVDC_FMT_NV12, PVDC_FMT_P010 };

    for (int i = 0; i < ARRAY_SIZE(formats); i++) {
        TScene scene = {};
        const uint8_t cbcr[4] = { 0x10, 0xf0, 0x20, 0xe0 };
        uint64_t n;
        T t;

        start(&t, NULL, false);
        add(&scene, plane(&t, OVERLAY(0), formats[i], 0, MODE_W, MODE_H,
                          0, 0, 0));
        commit_scene(&t, 0, &scene);
        assert_screen_is(&t, 0, &scene);
        n = compositions(&t, 0);
        g_assert_cmpuint(n, ==, 1);

        /* chroma samples (5, 7) and (6, 7): lines 13..16 of the head */
        vram_write(&t, CHROMA_BASE(0) + 7 * scene.planes[0].chroma_pitch +
                   5 * chroma_bps(formats[i]), cbcr,
                   chroma_bps(formats[i]));
        vram_write(&t, CHROMA_BASE(0) + 7 * scene.planes[0].chroma_pitch +
                   6 * chroma_bps(formats[i]), cbcr,
                   chroma_bps(formats[i]));
        assert_screen_is(&t, 0, &scene);
        g_assert_cmpuint(compositions(&t, 0), ==, n + 1);
        stop(&t);
    }
}

/* The mode of @w x @h on head 0, a frame of 16 ms, shown by @p alone. */
static uint32_t commit_large(T *t, uint32_t w, uint32_t h, const TPlane *p)
{
    pvdc_write_mode_sized(&t->p, 0, w, h, w, h, w * h / 16);
    for (unsigned int i = 0; i < SLOTS; i++) {
        pvdc_wr(&t->p, PVDC_PLANE_SHADOW(plane_index(0, i)) + PVDC_PS_CTRL, 0);
    }
    write_tplane(t, 0, p);
    return pvdc_commit(&t->p, 0);
}

/*
 * Upscaling has no limit: a 20x20 (and a 1x1) framebuffer of every
 * format fills the largest mode, rotated and reflected too, each pixel
 * the framebuffer pixel nearest sampling takes (filtered: composed); a
 * 1/5 downscale is refused.
 */
static void test_tiny_source_fills_the_largest_mode(void)
{
    static const uint32_t formats[] = {
        PVDC_FMT_XRGB8888, PVDC_FMT_XBGR8888, PVDC_FMT_RGB565,
        PVDC_FMT_XRGB2101010, PVDC_FMT_YUYV, PVDC_FMT_NV12, PVDC_FMT_P010,
    };
    static const uint32_t ctrls[] = {
        0, PVDC_PS_CTRL_ROTATE_180, PVDC_PS_CTRL_REFLECT_X,
        PVDC_PS_CTRL_REFLECT_Y | PVDC_PS_CTRL_FILTER_BILINEAR,
    };
    static const uint32_t sizes[] = { 20, 1 };
    const uint32_t w = 1920, h = 1080;
    GRand *rng = g_rand_new_with_seed(20261204);
    TPlane p;
    T t;

    start(&t, "max-width=1920,max-height=1080", false);
    g_assert_cmphex(pvdc_rd(&t.p, PVDC_REG_MAX_SIZE), ==, PVDC_XY(w, h));
    g_assert_cmphex(pvdc_rd(&t.p, PVDC_REG_SCALE_LIMITS) >>
                    PVDC_SCALE_MAX_UPSCALE_SHIFT & PVDC_SCALE_FACTOR_MASK,
                    ==, 0);

    for (int f = 0; f < ARRAY_SIZE(formats); f++) {
        for (int n = 0; n < ARRAY_SIZE(sizes); n++) {
            uint32_t size = sizes[n];
            /* YUYV has no framebuffer narrower than a macropixel */
            uint32_t fw = formats[f] == PVDC_FMT_YUYV ? MAX(size, 2) : size;

            p = plane(&t, OVERLAY(0), formats[f], f % FB_SLOTS, fw, size,
                      0, 0, 0);
            p.dst_w = w;
            p.dst_h = h;
            for (int c = 0; c < ARRAY_SIZE(ctrls); c++) {
                bool flip_x = ctrls[c] & (PVDC_PS_CTRL_ROTATE_180 |
                                          PVDC_PS_CTRL_REFLECT_X);
                bool flip_y = ctrls[c] & (PVDC_PS_CTRL_ROTATE_180 |
                                          PVDC_PS_CTRL_REFLECT_Y);
                g_autofree uint32_t *got = NULL;
                int gw, gh;

                p.ctrl = ctrls[c];
                g_assert_cmphex(commit_large(&t, w, h, &p), ==,
                                PVDC_RESULT_APPLIED);
                got = pvdc_screendump(t.p.qts, 0, &gw, &gh);
                g_assert_cmpint(gw, ==, w);
                g_assert_cmpint(gh, ==, h);
                if (ctrls[c] & PVDC_PS_CTRL_FILTER_BILINEAR) {
                    continue;
                }
                for (int i = 0; i < 64; i++) {
                    /* the corners first, then anywhere */
                    int x = i < 4 ? (i & 1) * (w - 1) :
                            g_rand_int_range(rng, 0, w);
                    int y = i < 4 ? (i >> 1) * (h - 1) :
                            g_rand_int_range(rng, 0, h);
                    uint32_t fx = sample(0, p.src_w, w, flip_x, x, 0, fw);
                    uint32_t fy = sample(0, p.src_h, h, flip_y, y, 0, size);
                    uint32_t a;

                    g_assert_cmphex(got[y * w + x], ==,
                                    fetch(&t, &p, fx, fy, &a));
                }
            }
        }
    }

    /* 100 pixels onto 20: beyond the downscale limit of 4 */
    p = plane(&t, OVERLAY(0), PVDC_FMT_XRGB8888, 0, 100, 20, 0, 0, 0);
    p.dst_w = 20;
    g_assert_cmphex(commit_large(&t, w, h, &p), ==,
                    pvdc_result_of(PVDC_ERR_SCALE_RATIO,
                                   plane_index(0, OVERLAY(0))));
    p.dst_w = 25;
    g_assert_cmphex(commit_large(&t, w, h, &p), ==, PVDC_RESULT_APPLIED);
    g_rand_free(rng);
    stop(&t);
}

/*
 * A CRC is captured when the head is enabled and at every vblank after,
 * each tagged with its vblank count; turned off, the last one stays.
 */
static void test_crc_frame_follows_vblank_count(void)
{
    g_autofree uint32_t *want = g_new(uint32_t, MODE_W * MODE_H);
    TScene scene = {};
    uint32_t crc;
    T t;

    start(&t, NULL, true);
    build_two_planes(&t, &scene);
    reference(&t, &scene, want);
    crc = pvdc_frame_crc(want, MODE_W * MODE_H);
    commit_scene(&t, 0, &scene);
    g_assert_cmphex(pvdc_head_ctl(&t.p, 0, PVDC_HEAD_CRC_VALUE), ==, crc);
    g_assert_cmpuint(pvdc_head_ctl(&t.p, 0, PVDC_HEAD_CRC_FRAME), ==,
                     pvdc_head_ctl(&t.p, 0, PVDC_HEAD_VBLANK_COUNT));
    g_assert_cmphex(next_frame_crc(&t, 0), ==, crc);
    g_assert_cmphex(next_frame_crc(&t, 0), ==, crc);

    /* off: the last value stays, nothing more is captured */
    pvdc_wr(&t.p, PVDC_HEAD_CONTROL(0) + PVDC_HEAD_CRC_CTRL, 0);
    pvdc_step_to(&t.p, t.p.now + 10 * SCALE_MS);
    g_assert_cmphex(pvdc_head_ctl(&t.p, 0, PVDC_HEAD_CRC_VALUE), ==, crc);
    g_assert_cmpuint(pvdc_head_ctl(&t.p, 0, PVDC_HEAD_CRC_FRAME), <,
                     pvdc_head_ctl(&t.p, 0, PVDC_HEAD_VBLANK_COUNT));
    stop(&t);
}

/*
 * With host-cursor=on the UI draws the cursor plane: the console picture
 * leaves it out and moving it composes nothing, while CRCs still have it.
 */
static void test_host_cursor_is_not_composed(void)
{
    TScene scene = {}, without = {};
    g_autofree uint32_t *want = g_new(uint32_t, MODE_W * MODE_H);
    uint64_t n;
    T t;

    start(&t, "host-cursor=on", true);
    build_cursor(&t, &scene, NULL);
    commit_scene(&t, 0, &scene);
    reference(&t, &scene, want);
    g_assert_cmphex(next_frame_crc(&t, 0), ==,
                    pvdc_frame_crc(want, MODE_W * MODE_H));

    pvdc_wr(&t.p, PVDC_HEAD_CONTROL(0) + PVDC_HEAD_CRC_CTRL, 0);
    without = scene;
    without.num_planes--;
    g_assert_cmpuint(scene.planes[without.num_planes].slot, ==, CURSOR);
    assert_screen_is(&t, 0, &without);
    n = compositions(&t, 0);

    scene.planes[without.num_planes].dst_x = -5;
    scene.planes[without.num_planes].dst_y = 40;
    commit_scene(&t, 0, &scene);
    assert_screen_is(&t, 0, &without);
    g_assert_cmpuint(compositions(&t, 0), ==, n);
    stop(&t);
}

/* ------------------------------------------------------------------------ */
/* Connector routing: console c shows the head that drives connector c      */
/* ------------------------------------------------------------------------ */

/* Disable @head and its planes. */
static void disable_head(T *t, unsigned int head)
{
    for (unsigned int i = 0; i < SLOTS; i++) {
        pvdc_wr(&t->p, PVDC_PLANE_SHADOW(plane_index(head, i)) + PVDC_PS_CTRL,
                0);
    }
    pvdc_wr(&t->p, PVDC_HEAD_SHADOW(head) + PVDC_HS_CTRL, 0);
    g_assert_cmphex(pvdc_commit(&t->p, head), ==, PVDC_RESULT_APPLIED);
    t->head_on[head] = false;
}

/* Enable @head showing @scene on @connector. */
static void commit_routed(T *t, unsigned int head, uint32_t connector,
                          const TScene *scene)
{
    pvdc_wr(&t->p, PVDC_HEAD_SHADOW(head) + PVDC_HS_CONNECTOR, connector);
    commit_scene(t, head, scene);
}

/* Head 1's picture: another background and other framebuffers. */
static void build_other_two_planes(T *t, TScene *scene)
{
    scene->background = 0x224466;
    add(scene, plane(t, PRIMARY, PVDC_FMT_XRGB8888, 2, MODE_W, 40, 0, 8, 0));
    add(scene, plane(t, OVERLAY(0), PVDC_FMT_RGB565, 3, 24, 16, 10, 4, 1));
}

/*
 * Connector 0 moves from head 0 to head 1, then the heads swap, then
 * go back: each console shows the head that drives its connector, or
 * the blank picture once the head left it.
 */
static void test_console_shows_the_head_driving_it(void)
{
    TScene scene0 = {}, scene1 = {};
    T t;

    start(&t, NULL, false);
    build_two_planes(&t, &scene0);
    build_other_two_planes(&t, &scene1);
    commit_scene(&t, 0, &scene0);
    assert_screen_is(&t, 0, &scene0);
    assert_screen_blank(&t, 1);

    disable_head(&t, 0);
    commit_routed(&t, 1, 0, &scene1);
    assert_screen_is(&t, 0, &scene1);
    assert_screen_blank(&t, 1);

    /* swapped: head 0 on connector 1, head 1 on connector 0 */
    commit_routed(&t, 0, 1, &scene0);
    assert_screen_is(&t, 0, &scene1);
    assert_screen_is(&t, 1, &scene0);

    /* and back, through a disable of both */
    disable_head(&t, 0);
    assert_screen_blank(&t, 1);
    disable_head(&t, 1);
    assert_screen_blank(&t, 0);
    commit_routed(&t, 1, 1, &scene1);
    commit_routed(&t, 0, 0, &scene0);
    assert_screen_is(&t, 0, &scene0);
    assert_screen_is(&t, 1, &scene1);
    stop(&t);
}

/* The surface of a console has the size of the mode of the head on it. */
static void test_console_takes_the_size_of_its_head(void)
{
    g_autofree uint32_t *got = NULL;
    TScene scene = {};
    int w, h;
    T t;

    start(&t, NULL, false);
    pvdc_write_mode_sized(&t.p, 1, MODE_W / 2, MODE_H / 2, MODE_HTOTAL,
                          MODE_VTOTAL, CLOCK_1MS);
    pvdc_wr(&t.p, PVDC_HEAD_SHADOW(1) + PVDC_HS_BACKGROUND, 0x123456);
    pvdc_wr(&t.p, PVDC_HEAD_SHADOW(1) + PVDC_HS_CONNECTOR, 0);
    g_assert_cmphex(pvdc_commit(&t.p, 1), ==, PVDC_RESULT_APPLIED);
    got = pvdc_screendump(t.p.qts, 0, &w, &h);
    g_assert_cmpint(w, ==, MODE_W / 2);
    g_assert_cmpint(h, ==, MODE_H / 2);
    for (int i = 0; i < w * h; i++) {
        g_assert_cmphex(got[i], ==, 0x123456);
    }
    assert_screen_blank(&t, 1);

    disable_head(&t, 1);
    build_two_planes(&t, &scene);
    commit_routed(&t, 0, 0, &scene);
    assert_screen_is(&t, 0, &scene);
    stop(&t);
}

/*
 * A VRAM write under a plane of head 1, which drives connector 0, is
 * composed again into console 0, once; console 1 stays blank.
 */
static void test_vram_write_updates_the_routed_console(void)
{
    TScene scene = {};
    uint32_t pixel = 0x00abcdef;
    uint64_t n;
    T t;

    start(&t, NULL, false);
    build_other_two_planes(&t, &scene);
    commit_routed(&t, 1, 0, &scene);
    assert_screen_is(&t, 0, &scene);
    assert_screen_blank(&t, 1);
    n = compositions(&t, 1);
    g_assert_cmpuint(n, ==, 1);

    /* under the overlay at (10, 4) */
    vram_write(&t, FB_BASE(3) + 5 * scene.planes[1].pitch + 7 * 2, &pixel,
               2);
    assert_screen_is(&t, 0, &scene);
    g_assert_cmpuint(compositions(&t, 1), ==, n + 1);
    /* the primary's line 30 */
    vram_write(&t, FB_BASE(2) + 30 * scene.planes[0].pitch + 3 * 4, &pixel,
               4);
    assert_screen_is(&t, 0, &scene);
    g_assert_cmpuint(compositions(&t, 1), ==, n + 2);
    assert_screen_blank(&t, 1);
    g_assert_cmpuint(compositions(&t, 0), ==, 0);
    stop(&t);
}

/* With host-cursor=on, the cursor of the routed head is the UI's too. */
static void test_host_cursor_follows_the_route(void)
{
    TScene scene = {}, without;
    uint64_t n;
    T t;

    start(&t, "host-cursor=on", false);
    build_cursor(&t, &scene, NULL);
    commit_routed(&t, 1, 0, &scene);
    without = scene;
    without.num_planes--;
    g_assert_cmpuint(scene.planes[without.num_planes].slot, ==, CURSOR);
    assert_screen_is(&t, 0, &without);
    assert_screen_blank(&t, 1);
    n = compositions(&t, 1);

    /* moving it composes nothing */
    scene.planes[without.num_planes].dst_x = -5;
    scene.planes[without.num_planes].dst_y = 40;
    commit_routed(&t, 1, 0, &scene);
    assert_screen_is(&t, 0, &without);
    g_assert_cmpuint(compositions(&t, 1), ==, n);
    stop(&t);
}

/* ------------------------------------------------------------------------ */
/* Connectors                                                               */
/* ------------------------------------------------------------------------ */

/* The preferred mode in the first detailed timing descriptor. */
static void edid_preferred(T *t, unsigned int head, uint32_t *w, uint32_t *h)
{
    uint8_t edid[PVDC_EDID_SIZE];

    for (int i = 0; i < PVDC_EDID_SIZE; i += 4) {
        stl_le_p(edid + i, pvdc_rd(&t->p, PVDC_EDID(head) + i));
    }
    *w = edid[56] | (edid[58] >> 4) << 8;
    *h = edid[59] | (edid[61] >> 4) << 8;
}

/*
 * The monitor on connector 0 changes while head 1 drives it: the hotplug
 * bit and EDID are connector 0's.
 */
static void test_hotplug_belongs_to_the_connector(void)
{
    TScene scene = {};
    uint32_t w, h;
    T t;

    start(&t, NULL, false);
    build_other_two_planes(&t, &scene);
    commit_routed(&t, 1, 0, &scene);
    (void)pvdc_rd(&t.p, PVDC_REG_INT_ACK);

    pvdc_qom_set_uint(t.p.qts, "head0-yres", 720);
    g_assert_cmphex(pvdc_rd(&t.p, PVDC_REG_INT_STATUS), ==,
                    PVDC_INT(0, PVDC_INT_HOTPLUG));
    g_assert_cmphex(pvdc_head_ctl(&t.p, 0, PVDC_HEAD_PREFERRED), ==,
                    PVDC_XY(1024, 720));
    g_assert_cmphex(pvdc_head_ctl(&t.p, 1, PVDC_HEAD_PREFERRED), ==,
                    PVDC_XY(1024, 768));
    edid_preferred(&t, 0, &w, &h);
    g_assert_cmpuint(h, ==, 720);
    edid_preferred(&t, 1, &w, &h);
    g_assert_cmpuint(h, ==, 768);
    stop(&t);
}

static void test_hotplug_on_property_change(void)
{
    uint32_t w, h;
    QDict *rsp;
    T t;

    start(&t, "xres=800,yres=600", false);
    edid_preferred(&t, 1, &w, &h);
    g_assert_cmpuint(w, ==, 800);
    g_assert_cmpuint(h, ==, 600);
    g_assert_cmphex(pvdc_head_ctl(&t.p, 1, PVDC_HEAD_SUGGESTED_POS), ==,
                    PVDC_XY(800, 0));

    pvdc_qom_set_uint(t.p.qts, "head1-xres", 1280);
    pvdc_qom_set_uint(t.p.qts, "head1-yres", 720);
    g_assert_cmphex(pvdc_rd(&t.p, PVDC_REG_INT_STATUS), ==,
                    PVDC_INT(1, PVDC_INT_HOTPLUG));
    g_assert_cmphex(pvdc_head_ctl(&t.p, 1, PVDC_HEAD_PREFERRED), ==,
                    PVDC_XY(1280, 720));
    edid_preferred(&t, 1, &w, &h);
    g_assert_cmpuint(w, ==, 1280);
    g_assert_cmpuint(h, ==, 720);
    /* head 0 did not change */
    g_assert_cmphex(pvdc_head_ctl(&t.p, 0, PVDC_HEAD_PREFERRED), ==,
                    PVDC_XY(800, 600));
    edid_preferred(&t, 0, &w, &h);
    g_assert_cmpuint(w, ==, 800);

    /* head 0 narrower: head 1, placed right of it, moves too */
    pvdc_wr(&t.p, PVDC_REG_INT_STATUS, pvdc_rd(&t.p, PVDC_REG_INT_STATUS));
    pvdc_qom_set_uint(t.p.qts, "head0-xres", 640);
    g_assert_cmphex(pvdc_rd(&t.p, PVDC_REG_INT_STATUS), ==,
                    PVDC_INT(0, PVDC_INT_HOTPLUG) |
                    PVDC_INT(1, PVDC_INT_HOTPLUG));
    g_assert_cmphex(pvdc_head_ctl(&t.p, 1, PVDC_HEAD_SUGGESTED_POS), ==,
                    PVDC_XY(640, 0));

    /* an explicit position */
    pvdc_wr(&t.p, PVDC_REG_INT_STATUS, pvdc_rd(&t.p, PVDC_REG_INT_STATUS));
    pvdc_qom_set_uint(t.p.qts, "head1-y", 600);
    g_assert_cmphex(pvdc_rd(&t.p, PVDC_REG_INT_STATUS), ==,
                    PVDC_INT(1, PVDC_INT_HOTPLUG));
    g_assert_cmphex(pvdc_head_ctl(&t.p, 1, PVDC_HEAD_SUGGESTED_POS), ==,
                    PVDC_XY(640, 600));

    /* the same value again is no event; out of range is refused */
    pvdc_wr(&t.p, PVDC_REG_INT_STATUS, pvdc_rd(&t.p, PVDC_REG_INT_STATUS));
    pvdc_qom_set_uint(t.p.qts, "head1-xres", 1280);
    rsp = qtest_qmp(t.p.qts, "{ 'execute': 'qom-set', 'arguments': "
                    "{ 'path': %s, 'property': 'head1-xres', "
                    "'value': 100000 } }", PVDC_QOM_PATH);
    g_assert(qdict_haskey(rsp, "error"));
    qobject_unref(rsp);
    rsp = qtest_qmp(t.p.qts, "{ 'execute': 'qom-set', 'arguments': "
                    "{ 'path': %s, 'property': 'head5-xres', "
                    "'value': 640 } }", PVDC_QOM_PATH);
    g_assert(qdict_haskey(rsp, "error"));
    qobject_unref(rsp);
    g_assert_cmphex(pvdc_rd(&t.p, PVDC_REG_INT_STATUS), ==, 0);
    g_assert_cmphex(pvdc_head_ctl(&t.p, 1, PVDC_HEAD_PREFERRED), ==,
                    PVDC_XY(1280, 720));
    stop(&t);
}

/* Connector state and the last CRC survive migration. */
static void test_migration_keeps_connectors_and_crc(void)
{
    g_autofree char *props = props_with(NULL);
    TScene scene = {};
    uint32_t crc, frame, w, h;
    T src, dst = {};

    start(&src, NULL, true);
    build_two_planes(&src, &scene);
    commit_scene(&src, 0, &scene);
    crc = next_frame_crc(&src, 0);
    frame = pvdc_head_ctl(&src.p, 0, PVDC_HEAD_CRC_FRAME);
    pvdc_qom_set_uint(src.p.qts, "head1-xres", 1280);
    pvdc_qom_set_uint(src.p.qts, "head1-y", 100);
    pvdc_step_to(&src.p, src.p.now + 1);
    pvdc_test_migrate(&src.p, &dst.p, props, NULL);
    dst.shadow = g_malloc0(SHADOW_VRAM);

    g_assert_cmphex(pvdc_head_ctl(&dst.p, 0, PVDC_HEAD_CRC_VALUE), ==, crc);
    g_assert_cmpuint(pvdc_head_ctl(&dst.p, 0, PVDC_HEAD_CRC_FRAME), ==, frame);
    g_assert_cmphex(pvdc_head_ctl(&dst.p, 1, PVDC_HEAD_PREFERRED), ==,
                    PVDC_XY(1280, 768));
    g_assert_cmphex(pvdc_head_ctl(&dst.p, 1, PVDC_HEAD_SUGGESTED_POS), ==,
                    PVDC_XY(1024, 100));
    edid_preferred(&dst, 1, &w, &h);
    g_assert_cmpuint(w, ==, 1280);
    g_assert_cmpuint(h, ==, 768);
    /* VRAM came along: the next frame is the same picture */
    g_assert_cmphex(next_frame_crc(&dst, 0), ==, crc);

    stop(&dst);
    stop(&src);
}

static void test_per_head_properties_at_start(void)
{
    uint32_t w, h;
    T t;

    start(&t, "head0-xres=640,head0-yres=480,head1-x=0,head1-y=480", false);
    g_assert_cmphex(pvdc_head_ctl(&t.p, 0, PVDC_HEAD_PREFERRED), ==,
                    PVDC_XY(640, 480));
    g_assert_cmphex(pvdc_head_ctl(&t.p, 1, PVDC_HEAD_PREFERRED), ==,
                    PVDC_XY(1024, 768));
    g_assert_cmphex(pvdc_head_ctl(&t.p, 1, PVDC_HEAD_SUGGESTED_POS), ==,
                    PVDC_XY(0, 480));
    edid_preferred(&t, 0, &w, &h);
    g_assert_cmpuint(w, ==, 640);
    g_assert_cmpuint(h, ==, 480);
    g_assert_cmphex(pvdc_rd(&t.p, PVDC_REG_INT_STATUS), ==, 0);
    stop(&t);
}

static void test_properties_of_missing_heads_fail_realize(void)
{
    QTestState *qts = qtest_init("-machine q35 -nodefaults");
    QDict *rsp;

    rsp = qtest_qmp(qts, "{ 'execute': 'device_add', 'arguments': "
                    "{ 'driver': 'pvdc', 'heads': 2, 'head2-xres': 640 } }");
    g_assert(qdict_haskey(rsp, "error"));
    qobject_unref(rsp);
    rsp = qtest_qmp(qts, "{ 'execute': 'device_add', 'arguments': "
                    "{ 'driver': 'pvdc', 'head0-xres': 100000 } }");
    g_assert(qdict_haskey(rsp, "error"));
    qobject_unref(rsp);
    qtest_quit(qts);
}

/* ------------------------------------------------------------------------ */
/* Colour pipeline                                                          */
/* ------------------------------------------------------------------------ */

/* Identity LUT of @size entries: entry i = i * 0xffff / (size - 1). */
static void lut_identity(uint16_t *lut, uint32_t size)
{
    for (uint32_t i = 0; i < size; i++) {
        for (int ch = 0; ch < 3; ch++) {
            lut[4 * i + ch] = (uint64_t)i * 0xffff / (size - 1);
        }
        lut[4 * i + 3] = 0;
    }
}

/* A rising LUT of @size entries with noise, different per channel. */
static void lut_curve(uint16_t *lut, uint32_t size, uint32_t seed)
{
    for (uint32_t i = 0; i < size; i++) {
        for (int ch = 0; ch < 3; ch++) {
            double x = (double)i / (size - 1);
            int v = 65535 * x * x * (1 + ch) / 3 + 65535 * x * (2 - ch) / 3 +
                    (int)(noise(seed, i, ch) % 512) - 256;

            lut[4 * i + ch] = MIN(MAX(v, 0), 0xffff);
        }
        /* the reserved field is ignored */
        lut[4 * i + 3] = noise(seed, i, 3);
    }
}

/* 2 entries, from white to black: every channel c becomes 255 - c. */
static void lut_invert(uint16_t *lut)
{
    for (int ch = 0; ch < 4; ch++) {
        lut[ch] = 0xffff;
        lut[4 + ch] = 0;
    }
}

/* S31.32 sign-magnitude of @v. */
static uint64_t ctm_value(double v)
{
    uint64_t mag = (uint64_t)((v < 0 ? -v : v) * 4294967296.0 + 0.5);

    return (v < 0 ? 1ull << 63 : 0) | mag;
}

static void ctm_identity(uint64_t *ctm)
{
    for (unsigned int i = 0; i < 9; i++) {
        ctm[i] = i % 4 ? 0 : ctm_value(1);
    }
}

/* Channels mixed, one negative coefficient and one beyond the clamp. */
static void ctm_mix(uint64_t *ctm)
{
    static const double m[9] = {
        0.7, 0.2, 0.1,
        -0.25, 1.1, 0.3,
        0.05, 0.15, 0.85,
    };

    for (unsigned int i = 0; i < 9; i++) {
        ctm[i] = ctm_value(m[i]);
    }
    /* 2^40 in S31.32: clamped to 2^13 - 2^-32 */
    ctm[8] = 1ull << 62 | 0x1234;
}

typedef struct ColorCase {
    const char *name;
    uint32_t stages;
    uint32_t degamma_size, gamma_size;
} ColorCase;

static const ColorCase color_cases[] = {
    { "gamma-17", PVDC_HS_CTRL_GAMMA, 0, 17 },
    { "degamma-256", PVDC_HS_CTRL_DEGAMMA, 256, 0 },
    { "ctm", PVDC_HS_CTRL_CTM, 0, 0 },
    { "degamma-2-ctm-gamma-4096",
      PVDC_HS_CTRL_DEGAMMA | PVDC_HS_CTRL_CTM | PVDC_HS_CTRL_GAMMA, 2,
      PVDC_LUT_MAX_SIZE },
    { "degamma-33-gamma-1024", PVDC_HS_CTRL_DEGAMMA | PVDC_HS_CTRL_GAMMA,
      33, 1024 },
};

static void color_build(TColor *c, const ColorCase *cc)
{
    memset(c, 0, sizeof(*c));
    c->stages = cc->stages;
    c->degamma_size = cc->degamma_size ? cc->degamma_size : 2;
    c->gamma_size = cc->gamma_size ? cc->gamma_size : 2;
    lut_curve(c->degamma, c->degamma_size, 1);
    lut_curve(c->gamma, c->gamma_size, 2);
    ctm_mix(c->ctm);
}

/*
 * A pipeline composed through the registers, pixel by pixel against the
 * reference model (tests/qtest/pvdc-color-ref.h): in the CRC and on the
 * console.
 */
static void test_color_matches_reference(const void *opaque)
{
    g_autofree TColor *c = g_new(TColor, 1);
    TScene scene = {};
    T t;

    start(&t, NULL, true);
    color_build(c, opaque);
    build_two_planes(&t, &scene);
    scene.color = c;
    check_scene(&t, &scene);
    assert_screen_is(&t, 0, &scene);
    stop(&t);
}

/* Identity stages, at the smallest and the largest LUT, change nothing. */
static void test_color_identity_is_no_pipeline(void)
{
    g_autofree TColor *c = g_new0(TColor, 1);
    TScene scene = {};
    uint32_t crc_without, crc_with;
    T t;

    start(&t, NULL, true);
    build_two_planes(&t, &scene);
    commit_scene(&t, 0, &scene);
    crc_without = next_frame_crc(&t, 0);

    c->stages = PVDC_HS_CTRL_DEGAMMA | PVDC_HS_CTRL_CTM | PVDC_HS_CTRL_GAMMA;
    c->degamma_size = PVDC_LUT_MIN_SIZE;
    c->gamma_size = PVDC_LUT_MAX_SIZE;
    lut_identity(c->degamma, c->degamma_size);
    lut_identity(c->gamma, c->gamma_size);
    ctm_identity(c->ctm);
    scene.color = c;
    commit_scene(&t, 0, &scene);
    crc_with = next_frame_crc(&t, 0);
    g_assert_cmphex(crc_with, ==, crc_without);
    scene.color = NULL;
    assert_screen_is(&t, 0, &scene);
    stop(&t);
}

/* A 2-entry GAMMA_LUT from white to black inverts every pixel. */
static void test_color_known_lut(void)
{
    g_autofree TColor *c = g_new0(TColor, 1);
    g_autofree uint32_t *want = g_new(uint32_t, MODE_W * MODE_H);
    g_autofree uint32_t *got = NULL;
    TScene scene = {};
    int w, h;
    T t;

    start(&t, NULL, true);
    scene.background = 0x405060;
    add(&scene, plane(&t, OVERLAY(0), PVDC_FMT_XRGB8888, 1, 20, 16, 30, 20,
                      1));
    reference(&t, &scene, want);
    for (int i = 0; i < MODE_W * MODE_H; i++) {
        want[i] ^= 0xffffff;
    }
    c->stages = PVDC_HS_CTRL_GAMMA;
    c->gamma_size = 2;
    lut_invert(c->gamma);
    scene.color = c;
    commit_scene(&t, 0, &scene);
    g_assert_cmphex(next_frame_crc(&t, 0), ==,
                    pvdc_frame_crc(want, MODE_W * MODE_H));
    got = pvdc_screendump(t.p.qts, 0, &w, &h);
    g_assert_cmpint(w * h, ==, MODE_W * MODE_H);
    assert_pictures_equal(got, want, 0);
    /* the background, 0x405060, where no plane covers it */
    g_assert_cmphex(got[(MODE_H - 1) * MODE_W + MODE_W - 1], ==, 0xbfaf9f);
    stop(&t);
}

/* The CRC of @scene as the reference draws it. */
static uint32_t reference_crc(T *t, const TScene *scene)
{
    g_autofree uint32_t *want = g_new(uint32_t, MODE_W * MODE_H);

    reference(t, scene, want);
    return pvdc_frame_crc(want, MODE_W * MODE_H);
}

/*
 * The tables are the ones in VRAM when the doorbell rang (and when
 * DOORBELL_AMEND took the commit again), not at the latch point nor after
 * it; a colour change on an enabled head needs no modeset.
 */
static void test_color_copied_at_the_doorbell(void)
{
    g_autofree TColor *c = g_new0(TColor, 1);
    g_autofree uint16_t *black = g_new0(uint16_t, 4 * 2);
    TScene scene = {};
    uint32_t count, crc;
    T t;

    start(&t, NULL, true);
    build_two_planes(&t, &scene);
    commit_scene(&t, 0, &scene);
    count = pvdc_head_ctl(&t.p, 0, PVDC_HEAD_VBLANK_COUNT);

    /* the inverting LUT at the doorbell, black before the latch point */
    c->stages = PVDC_HS_CTRL_GAMMA;
    c->gamma_size = 2;
    lut_invert(c->gamma);
    write_color(&t, 0, c);
    pvdc_wr(&t.p, PVDC_HEAD_SHADOW(0) + PVDC_HS_CTRL,
            PVDC_HS_CTRL_ENABLE | PVDC_HS_CTRL_GAMMA);
    pvdc_doorbell(&t.p, 0);
    /* an amend with the same tables takes over what the doorbell made */
    pvdc_wr(&t.p, PVDC_HEAD_CONTROL(0) + PVDC_HEAD_DOORBELL,
            PVDC_DOORBELL_AMEND);
    write_lut(&t, COLOR_GAMMA, black, 2);
    g_assert_cmphex(pvdc_wait_outcome(&t.p, 0, 2 * PERIOD_1MS), ==,
                    PVDC_RESULT_APPLIED);
    /* not a modeset: the timeline went on */
    g_assert_cmpuint(pvdc_head_ctl(&t.p, 0, PVDC_HEAD_VBLANK_COUNT), ==,
                     count + 1);
    scene.color = c;
    assert_screen_is(&t, 0, &scene);
    crc = next_frame_crc(&t, 0);
    /* nor after it */
    write_lut(&t, COLOR_GAMMA, black, 2);
    g_assert_cmphex(next_frame_crc(&t, 0), ==, crc);
    assert_screen_is(&t, 0, &scene);

    /* an amend copies again: black now, the curve after it */
    lut_curve(c->gamma, 2, 5);
    write_lut(&t, COLOR_GAMMA, black, 2);
    pvdc_doorbell(&t.p, 0);
    write_lut(&t, COLOR_GAMMA, c->gamma, 2);
    pvdc_wr(&t.p, PVDC_HEAD_CONTROL(0) + PVDC_HEAD_DOORBELL,
            PVDC_DOORBELL_AMEND);
    write_lut(&t, COLOR_GAMMA, black, 2);
    g_assert_cmphex(pvdc_wait_outcome(&t.p, 0, 2 * PERIOD_1MS), ==,
                    PVDC_RESULT_APPLIED);
    assert_screen_is(&t, 0, &scene);

    /*
     * Flips keep the pipeline (the same tables again), also across a
     * refused commit and an amend
     */
    write_lut(&t, COLOR_GAMMA, c->gamma, 2);
    g_assert_cmphex(pvdc_commit(&t.p, 0), ==, PVDC_RESULT_APPLIED);
    assert_screen_is(&t, 0, &scene);
    pvdc_wr(&t.p, PVDC_HEAD_SHADOW(0) + PVDC_HS_BANDWIDTH, 1);
    g_assert_cmphex(pvdc_commit(&t.p, 0), ==,
                    pvdc_head_result(PVDC_ERR_BANDWIDTH_CHANGE));
    assert_screen_is(&t, 0, &scene);
    pvdc_doorbell(&t.p, 0);
    pvdc_wr(&t.p, PVDC_HEAD_CONTROL(0) + PVDC_HEAD_DOORBELL,
            PVDC_DOORBELL_AMEND);
    g_assert_cmphex(pvdc_wait_outcome(&t.p, 0, 2 * PERIOD_1MS), ==,
                    pvdc_head_result(PVDC_ERR_BANDWIDTH_CHANGE));
    pvdc_wr(&t.p, PVDC_HEAD_SHADOW(0) + PVDC_HS_BANDWIDTH,
            pvdc_rd(&t.p, PVDC_HEAD_ACTIVE(0) + PVDC_HS_BANDWIDTH));
    pvdc_doorbell(&t.p, 0);
    pvdc_wr(&t.p, PVDC_HEAD_CONTROL(0) + PVDC_HEAD_DOORBELL,
            PVDC_DOORBELL_AMEND);
    g_assert_cmphex(pvdc_wait_outcome(&t.p, 0, 2 * PERIOD_1MS), ==,
                    PVDC_RESULT_APPLIED);
    assert_screen_is(&t, 0, &scene);
    g_assert_cmphex(next_frame_crc(&t, 0), ==, reference_crc(&t, &scene));

    /* and the pipeline goes when its bit does */
    pvdc_wr(&t.p, PVDC_HEAD_SHADOW(0) + PVDC_HS_CTRL, PVDC_HS_CTRL_ENABLE);
    g_assert_cmphex(pvdc_commit(&t.p, 0), ==, PVDC_RESULT_APPLIED);
    scene.color = NULL;
    assert_screen_is(&t, 0, &scene);
    stop(&t);
}

/*
 * A head showing one framebuffer is displayed from VRAM until a pipeline
 * that changes pixels is turned on, and again once it is off; an identity
 * pipeline keeps it there.
 */
static void test_color_turns_direct_scanout_off_and_on(void)
{
    g_autofree TColor *c = g_new0(TColor, 1);
    TScene scene = {};
    uint32_t pixel = 0x00fedcba;
    uint64_t n;
    T t;

    start(&t, NULL, false);
    show_one_framebuffer(&t, &scene);
    g_assert_cmpuint(compositions(&t, 0), ==, 0);

    c->stages = PVDC_HS_CTRL_GAMMA;
    c->gamma_size = PVDC_LUT_MAX_SIZE;
    lut_identity(c->gamma, c->gamma_size);
    scene.color = c;
    commit_scene(&t, 0, &scene);
    assert_screen_is(&t, 0, &scene);
    g_assert_cmpuint(compositions(&t, 0), ==, 0);

    lut_invert(c->gamma);
    c->gamma_size = 2;
    commit_scene(&t, 0, &scene);
    assert_screen_is(&t, 0, &scene);
    n = compositions(&t, 0);
    g_assert_cmpuint(n, >, 0);
    vram_write(&t, FB_BASE(0) + 17 * scene.planes[0].pitch + 3 * 4, &pixel,
               4);
    assert_screen_is(&t, 0, &scene);
    g_assert_cmpuint(compositions(&t, 0), >, n);

    scene.color = NULL;
    commit_scene(&t, 0, &scene);
    assert_screen_is(&t, 0, &scene);
    n = compositions(&t, 0);
    pixel = 0x123456;
    vram_write(&t, FB_BASE(0) + 18 * scene.planes[0].pitch + 3 * 4, &pixel,
               4);
    assert_screen_is(&t, 0, &scene);
    g_assert_cmpuint(compositions(&t, 0), ==, n);
    stop(&t);
}

/* ------------------------------------------------------------------------ */
/* Writeback                                                                */
/* ------------------------------------------------------------------------ */

/* The target and WB_GUARD bytes either side filled with WB_SENTINEL. */
static void wb_clear(T *t)
{
    g_autofree uint8_t *buf = g_malloc(WB_SPAN);

    memset(buf, WB_SENTINEL, WB_SPAN);
    qpci_memwrite(t->p.dev, t->p.vram, WB_BASE - WB_GUARD, buf, WB_SPAN);
}

static bool wb_untouched(const uint8_t *span, size_t from, size_t to)
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

/*
 * What was written to the target @wb as 0x00RRGGBB pixels, checking the
 * top byte (bits) are opaque and every byte outside the pixels (padding,
 * guards) is untouched.
 */
static uint32_t *wb_read(T *t, const TWriteback *wb)
{
    g_autofree uint8_t *span = g_malloc(WB_SPAN);
    uint32_t *px = g_new(uint32_t, MODE_W * MODE_H);
    bool bgr = wb->format == PVDC_FMT_XBGR8888 ||
               wb->format == PVDC_FMT_ABGR8888;
    const uint8_t *target = span + WB_GUARD;

    qpci_memread(t->p.dev, t->p.vram, WB_BASE - WB_GUARD, span, WB_SPAN);
    g_assert_true(wb_untouched(span, 0, WB_GUARD));
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
        g_assert_true(wb_untouched(span, WB_GUARD + y * wb->pitch + MODE_PITCH,
                                   WB_GUARD + (y + 1) * wb->pitch));
    }
    g_assert_true(wb_untouched(span, WB_GUARD + (MODE_H - 1) * wb->pitch +
                               MODE_PITCH, WB_SPAN));
    return px;
}

/* Nothing written anywhere in the target span. */
static void assert_wb_untouched(T *t)
{
    g_autofree uint8_t *span = g_malloc(WB_SPAN);

    qpci_memread(t->p.dev, t->p.vram, WB_BASE - WB_GUARD, span, WB_SPAN);
    g_assert_true(wb_untouched(span, 0, WB_SPAN));
}

/* An opaque primary, and an ARGB overlay blended and scaled over it. */
static void build_wb_scene(T *t, TScene *scene, unsigned int seed)
{
    TPlane p;

    memset(scene, 0, sizeof(*scene));
    scene->background = 0x102030;
    add(scene, plane(t, PRIMARY, PVDC_FMT_XRGB8888, 0, MODE_W, MODE_H,
                     0, 0, 0));
    p = plane(t, OVERLAY(0), PVDC_FMT_ARGB8888, 1 + seed, 20, 15, 7, 5, 1);
    p.ctrl = BLEND(PVDC_BLEND_PREMULTI);
    p.src_x = FP16(2);
    p.src_w = FP16(17);
    p.dst_w = 45;
    p.dst_h = 37;
    p.alpha = 0xc000;
    add(scene, p);
}

/*
 * The pixels written at the latch are the frame the head then shows: its
 * screendump, the reference and its CRC (read in the frame the commit
 * started).
 */
static void assert_wb_is_the_frame(T *t, const TScene *scene)
{
    g_autofree uint32_t *got = wb_read(t, scene->wb);
    g_autofree uint32_t *want = g_new(uint32_t, MODE_W * MODE_H);
    g_autofree uint32_t *shown = NULL;
    uint32_t frame;
    int w, h;

    g_assert_cmphex(pvdc_read_crc(&t->p, 0, &frame), ==,
                    pvdc_frame_crc(got, MODE_W * MODE_H));
    g_assert_cmpuint(frame, ==, pvdc_head_ctl(&t->p, 0, PVDC_HEAD_DONE_FRAME));
    shown = pvdc_screendump(t->p.qts, 0, &w, &h);
    g_assert_cmpint(w * h, ==, MODE_W * MODE_H);
    assert_pictures_equal(got, shown, 0);
    reference(t, scene, want);
    assert_pictures_equal(got, want, 0);
}

static void test_wb_format(const void *opaque)
{
    static TColor invert = {
        .stages = PVDC_HS_CTRL_GAMMA,
        .gamma_size = 2,
    };
    TWriteback wb = { .format = *(const uint32_t *)opaque,
                      .pitch = MODE_PITCH + 64 };
    TScene scene;
    T t;

    lut_invert(invert.gamma);
    start(&t, NULL, true);
    build_wb_scene(&t, &scene, 0);
    scene.wb = &wb;
    wb_clear(&t);
    commit_scene(&t, 0, &scene);
    g_assert_cmphex(pvdc_rd(&t.p, PVDC_HEAD_ACTIVE(0) + PVDC_HS_CTRL) &
                    PVDC_HS_CTRL_WRITEBACK, ==, PVDC_HS_CTRL_WRITEBACK);
    assert_wb_is_the_frame(&t, &scene);

    /* after the colour pipeline, on an enabled head at its vblank */
    scene.color = &invert;
    wb.pitch = WB_MAX_PITCH;
    wb_clear(&t);
    commit_scene(&t, 0, &scene);
    assert_wb_is_the_frame(&t, &scene);
    stop(&t);
}

/*
 * The frame is written once, at the latch of the commit that asks for it:
 * VRAM written afterwards does not change it, a commit without WRITEBACK
 * writes nothing, one with it writes the frame as it then is, and a
 * refused one writes nothing.
 */
static void test_wb_written_once_at_the_latch(void)
{
    TWriteback wb = { .format = PVDC_FMT_XRGB8888, .pitch = MODE_PITCH };
    g_autofree uint32_t *first = NULL, *again = NULL;
    uint64_t primary = PVDC_PLANE_SHADOW(plane_index(0, PRIMARY));
    TScene scene;
    T t;

    start(&t, NULL, true);
    build_wb_scene(&t, &scene, 0);
    scene.wb = &wb;
    wb_clear(&t);
    commit_scene(&t, 0, &scene);
    first = wb_read(&t, &wb);

    /* new pixels under the primary, frames later: the target keeps its */
    scene.planes[0] = plane(&t, PRIMARY, PVDC_FMT_XRGB8888, 0, MODE_W,
                            MODE_H, 0, 0, 0);
    fill_lines(&t, FB_BASE(0), MODE_PITCH, 4, MODE_W, MODE_H, 77);
    pvdc_step_to_next_vblank(&t.p, 0);
    pvdc_step_to_next_vblank(&t.p, 0);
    again = wb_read(&t, &wb);
    assert_pictures_equal(again, first, 0);
    g_free(again);

    /* a flip without WRITEBACK: the bit is not kept */
    wb_clear(&t);
    scene.wb = NULL;
    commit_scene(&t, 0, &scene);
    g_assert_cmphex(pvdc_rd(&t.p, PVDC_HEAD_ACTIVE(0) + PVDC_HS_CTRL), ==,
                    PVDC_HS_CTRL_ENABLE);
    pvdc_step_to_next_vblank(&t.p, 0);
    assert_wb_untouched(&t);

    /* with it again: the frame as VRAM now has it */
    scene.wb = &wb;
    commit_scene(&t, 0, &scene);
    again = wb_read(&t, &wb);
    assert_wb_is_the_frame(&t, &scene);

    /* refused (a plane rule): nothing written */
    wb_clear(&t);
    pvdc_wr(&t.p, primary + PVDC_PS_FB_OFFSET, 2);
    pvdc_doorbell(&t.p, 0);
    g_assert_cmphex(pvdc_wait_outcome(&t.p, 0, NANOSECONDS_PER_SECOND), ==,
                    pvdc_result_of(PVDC_ERR_OFFSET_ALIGN,
                                   plane_index(0, PRIMARY)));
    pvdc_step_to_next_vblank(&t.p, 0);
    assert_wb_untouched(&t);
    stop(&t);
}

/*
 * The target is marked dirty: head 1 showing it in an overlay (composed,
 * not scanned out directly) shows the new pixels on its console.
 */
static void test_wb_target_is_marked_dirty(void)
{
    TWriteback wb = { .format = PVDC_FMT_ARGB8888, .pitch = MODE_PITCH };
    g_autofree uint32_t *before = NULL, *after = NULL, *written = NULL;
    TPlane viewer = {
        .slot = OVERLAY(0),
        .format = PVDC_FMT_XRGB8888,
        .fb = WB_BASE / FB_SPACING,
        .pitch = MODE_PITCH,
        .fb_w = MODE_W,
        .fb_h = MODE_H,
        .src_w = FP16(MODE_W),
        .src_h = FP16(MODE_H),
        .dst_x = 1,
        .dst_y = 1,
        .dst_w = MODE_W,
        .dst_h = MODE_H,
        .alpha = 0xffff,
    };
    TScene scene, shows_target = { .background = 0x000080 };
    int w, h;
    T t;

    start(&t, NULL, false);
    g_assert_cmpuint(FB_BASE(viewer.fb), ==, WB_BASE);
    wb_clear(&t);
    add(&shows_target, viewer);
    commit_scene(&t, 1, &shows_target);
    before = pvdc_screendump(t.p.qts, 1, &w, &h);
    g_assert_cmphex(before[MODE_W + 1], ==, 0xa5a5a5);

    build_wb_scene(&t, &scene, 0);
    scene.wb = &wb;
    commit_scene(&t, 0, &scene);
    written = wb_read(&t, &wb);
    after = pvdc_screendump(t.p.qts, 1, &w, &h);
    for (int y = 1; y < MODE_H; y++) {
        for (int x = 1; x < MODE_W; x++) {
            g_assert_cmphex(after[y * MODE_W + x], ==,
                            written[(y - 1) * MODE_W + x - 1]);
        }
    }
    stop(&t);
}

/* 0x00RRGGBB as the 0x00BBGGRR of an ABGR8888 pixel */
static uint32_t bgr(uint32_t rgb)
{
    return (rgb & 0xff) << 16 | (rgb & 0xff00) | (rgb >> 16 & 0xff);
}

/*
 * Writebacks of a large mode with four scaled planes overdraw the
 * composition budget CRC capture shares: a commit that reaches its latch
 * point in debt stays armed (DOORBELL 1, DONE_SEQ unchanged) and latches,
 * written, at a later vblank.  None is dropped, and head 1 keeps latching
 * its flips at its own vblanks meanwhile.  A head enabled by such a
 * commit waits whole frames of its new mode.
 */
static void test_wb_budget_defers_the_latch(void)
{
    const uint32_t w = 2048, h = 2048, commits = 6;
    uint64_t hs = PVDC_HEAD_SHADOW(0);
    unsigned int deferred = 0;
    int64_t enabled_at;
    TScene small = {};
    T t;

    /* VRAM that holds the targets above WB_BASE: the default does not */
    start(&t, "max-width=2048,max-height=2048,vram-size=64M", false);
    build_two_planes(&t, &small);
    commit_scene(&t, 1, &small);

    /* 10 ms frames: each refills a tenth of what one writeback costs */
    pvdc_write_mode_sized(&t.p, 0, w, h, w, h, w * h / 10);
    for (unsigned int slot = PRIMARY; slot < CURSOR; slot++) {
        TPlane p = plane(&t, slot, PVDC_FMT_XRGB8888, slot, 16, 16, 0, 0,
                         slot);

        p.dst_w = w;
        p.dst_h = h;
        write_tplane(&t, 0, &p);
    }
    pvdc_wr(&t.p, hs + PVDC_HS_WB_FORMAT, PVDC_FMT_XRGB8888);
    pvdc_wr(&t.p, hs + PVDC_HS_WB_OFFSET, WB_BASE);
    pvdc_wr(&t.p, hs + PVDC_HS_WB_PITCH, w * 4);
    pvdc_wr(&t.p, hs + PVDC_HS_CTRL,
            PVDC_HS_CTRL_ENABLE | PVDC_HS_CTRL_WRITEBACK);

    for (unsigned int k = 0; k < commits; k++) {
        uint64_t written = compositions(&t, 0);
        uint32_t seq = pvdc_head_ctl(&t.p, 0, PVDC_HEAD_ARMED_SEQ) + 1;
        uint32_t natural = pvdc_head_ctl(&t.p, 0, PVDC_HEAD_VBLANK_COUNT) + 1;

        qtest_writel(t.p.qts, t.p.vram.addr + WB_BASE, 0);
        pvdc_doorbell(&t.p, 0);
        if (k) {
            int64_t latch = pvdc_vblank_time(&t.p, 0) +
                            pvdc_head_ctl(&t.p, 0, PVDC_HEAD_FRAME_PERIOD);

            /* a flip of head 1 armed across head 0's latch point */
            pvdc_step_to(&t.p, latch - 1);
            pvdc_doorbell(&t.p, 1);
            pvdc_step_to(&t.p, latch);
        }
        if (pvdc_head_ctl(&t.p, 0, PVDC_HEAD_DOORBELL)) {
            /* in debt at its latch point: still armed, nothing written */
            deferred++;
            g_assert_cmpuint(pvdc_head_ctl(&t.p, 0, PVDC_HEAD_DONE_SEQ), ==,
                             seq - 1);
            g_assert_cmphex(qtest_readl(t.p.qts, t.p.vram.addr + WB_BASE),
                            ==, 0);
            g_assert_cmpuint(compositions(&t, 0), ==, written);
        }
        while (pvdc_head_ctl(&t.p, 0, PVDC_HEAD_DOORBELL)) {
            uint32_t flip = pvdc_head_ctl(&t.p, 1, PVDC_HEAD_ARMED_SEQ);

            /* head 1 latches its flips at its own vblanks meanwhile */
            pvdc_step_to(&t.p, pvdc_now_ns(&t.p) + PERIOD_1MS);
            g_assert_cmpuint(pvdc_head_ctl(&t.p, 1, PVDC_HEAD_DONE_SEQ), ==,
                             flip);
            g_assert_cmphex(pvdc_head_ctl(&t.p, 1, PVDC_HEAD_RESULT), ==,
                            PVDC_RESULT_APPLIED);
            pvdc_doorbell(&t.p, 1);
        }
        g_assert_cmpuint(pvdc_head_ctl(&t.p, 0, PVDC_HEAD_DONE_SEQ), ==, seq);
        g_assert_cmphex(pvdc_head_ctl(&t.p, 0, PVDC_HEAD_RESULT), ==,
                        PVDC_RESULT_APPLIED);
        /* written once, at a vblank of its own */
        g_assert_cmpuint(compositions(&t, 0), ==, written + 1);
        g_assert_cmphex(qtest_readl(t.p.qts, t.p.vram.addr + WB_BASE) >> 24,
                        ==, 0xff);
        if (k) {
            g_assert_cmpuint(pvdc_head_ctl(&t.p, 0, PVDC_HEAD_DONE_FRAME), >=,
                             natural);
        }
    }
    g_test_message("%u of %u writebacks deferred", deferred, commits);
    g_assert_cmpuint(deferred, >=, 2);

    /*
     * Still in debt, head 1 disabled and enabled again with a writeback:
     * due at once, it latches a whole number of frames of its new mode
     * later.
     */
    g_assert_cmphex(pvdc_wait_outcome(&t.p, 1, NANOSECONDS_PER_SECOND), ==,
                    PVDC_RESULT_APPLIED);
    for (unsigned int slot = 0; slot < SLOTS; slot++) {
        pvdc_wr(&t.p, PVDC_PLANE_SHADOW(plane_index(1, slot)) + PVDC_PS_CTRL,
                0);
    }
    pvdc_wr(&t.p, PVDC_HEAD_SHADOW(1) + PVDC_HS_CTRL, 0);
    g_assert_cmphex(pvdc_commit(&t.p, 1), ==, PVDC_RESULT_APPLIED);
    hs = PVDC_HEAD_SHADOW(1);
    pvdc_wr(&t.p, hs + PVDC_HS_WB_FORMAT, PVDC_FMT_ABGR8888);
    pvdc_wr(&t.p, hs + PVDC_HS_WB_OFFSET, WB_BASE + 32 * MiB);
    pvdc_wr(&t.p, hs + PVDC_HS_WB_PITCH, MODE_PITCH);
    pvdc_wr(&t.p, hs + PVDC_HS_CTRL,
            PVDC_HS_CTRL_ENABLE | PVDC_HS_CTRL_WRITEBACK);
    enabled_at = pvdc_now_ns(&t.p);
    pvdc_doorbell(&t.p, 1);
    g_assert_cmpuint(pvdc_head_ctl(&t.p, 1, PVDC_HEAD_DOORBELL), ==, 1);
    g_assert_cmphex(pvdc_wait_outcome(&t.p, 1, NANOSECONDS_PER_SECOND), ==,
                    PVDC_RESULT_APPLIED);
    g_test_message("head 1 enabled %" PRId64 " ns after its doorbell",
                   pvdc_now_ns(&t.p) - enabled_at);
    g_assert_cmpint(pvdc_vblank_time(&t.p, 1), ==, pvdc_now_ns(&t.p));
    g_assert_cmpint(pvdc_now_ns(&t.p), >, enabled_at);
    g_assert_cmpint((pvdc_now_ns(&t.p) - enabled_at) % PERIOD_1MS, ==, 0);
    g_assert_cmphex(qtest_readl(t.p.qts, t.p.vram.addr + WB_BASE + 32 * MiB),
                    ==, 0xff000000 | bgr(small.background));
    stop(&t);
}

/* ------------------------------------------------------------------------ */
/* Property: what the rules accept is drawn exactly                         */
/* ------------------------------------------------------------------------ */

#define PROPERTY_STATES     500

/* A 4-aligned pitch for @lines lines of @line bytes, in @room bytes. */
static uint32_t random_pitch(GRand *rng, uint32_t line, uint32_t lines,
                             uint32_t room)
{
    uint32_t least = ROUND_UP(line, 4);

    /* one line: any pitch at all, the rules take or refuse it */
    if (lines == 1 && g_rand_boolean(rng)) {
        return MAX(ROUND_DOWN(g_rand_int(rng), 4), least);
    }
    return MIN(least + 4 * g_rand_int_range(rng, 0, 17),
               ROUND_DOWN(room / lines, 4));
}

/* A 16.16 source span inside @size pixels: whole pixels or not. */
static void random_span(GRand *rng, uint32_t size, uint32_t *pos,
                        uint32_t *len)
{
    uint32_t units = size << 16;

    if (g_rand_boolean(rng)) {
        uint32_t first = g_rand_int_range(rng, 0, size);

        *pos = first << 16;
        *len = (uint32_t)g_rand_int_range(rng, 1, size - first + 1) << 16;
        return;
    }
    *pos = g_rand_int_range(rng, 0, units);
    /* now and then a sliver of a pixel: the largest upscales */
    *len = g_rand_int_range(rng, 1, g_rand_int_range(rng, 0, 4) ?
                                    units - *pos + 1 :
                                    MIN(units - *pos, 64) + 1);
}

/* A random plane of @format on slot @slot, framebuffer @fb, at @zpos. */
static TPlane random_plane(T *t, GRand *rng, unsigned int slot,
                           uint32_t format, unsigned int fb, uint32_t zpos)
{
    static const uint32_t transforms[] = {
        0, PVDC_PS_CTRL_ROTATE_180, PVDC_PS_CTRL_REFLECT_X,
        PVDC_PS_CTRL_REFLECT_Y, PVDC_PS_CTRL_REFLECT_X | PVDC_PS_CTRL_REFLECT_Y,
    };
    uint32_t cpp = format_cpp(format), bps = chroma_bps(format);
    uint32_t w = g_rand_int_range(rng, 1, 81);
    /* a quarter of them one line, whose pitch the engine never steps */
    uint32_t h = g_rand_int_range(rng, 0, 4) ? g_rand_int_range(rng, 1, 61)
                                             : 1;
    uint32_t seed = g_rand_int(rng);
    TPlane p = {
        .slot = slot,
        .format = format,
        .fb = fb,
        .zpos = zpos,
    };

    if (format == PVDC_FMT_YUYV) {
        w = ROUND_UP(w, 2);
    }
    p.fb_w = w;
    p.fb_h = h;
    p.pitch = random_pitch(rng, w * cpp, h, bps ? CHROMA_AT : FB_SPACING);
    /* a single line is written at the pitch of a line */
    fill_lines(t, FB_BASE(fb), h > 1 ? p.pitch : ROUND_UP(w * cpp, 4), cpp,
               w, h, seed);
    if (bps) {
        uint32_t cw = DIV_ROUND_UP(w, 2), ch = DIV_ROUND_UP(h, 2);

        p.chroma_pitch = random_pitch(rng, cw * bps, ch,
                                      FB_SPACING - CHROMA_AT);
        fill_lines(t, CHROMA_BASE(fb),
                   ch > 1 ? p.chroma_pitch : ROUND_UP(cw * bps, 4), bps, cw,
                   ch, seed ^ 0x5a5a);
        p.ctrl |= (uint32_t)g_rand_int_range(rng, 0, 3) <<
                  PVDC_PS_CTRL_COLOR_ENCODING_SHIFT;
        p.ctrl |= g_rand_boolean(rng) ? PVDC_PS_CTRL_COLOR_RANGE_FULL : 0;
    }
    random_span(rng, w, &p.src_x, &p.src_w);
    random_span(rng, h, &p.src_y, &p.src_h);
    /* down to 1/PVDC_MAX_DOWNSCALE... (4), up without a limit */
    p.dst_w = g_rand_int_range(rng, DIV_ROUND_UP(p.src_w, 4 << 16), 161);
    p.dst_h = g_rand_int_range(rng, DIV_ROUND_UP(p.src_h, 4 << 16), 121);
    p.dst_x = g_rand_int_range(rng, -(int)p.dst_w - 4, MODE_W + 4);
    p.dst_y = g_rand_int_range(rng, -(int)p.dst_h - 4, MODE_H + 4);
    p.ctrl |= transforms[g_rand_int_range(rng, 0, ARRAY_SIZE(transforms))];
    p.ctrl |= BLEND(g_rand_int_range(rng, 0, PVDC_BLEND_COVERAGE + 1));
    p.alpha = g_rand_boolean(rng) ? 0xffff : g_rand_int_range(rng, 0, 0x10000);
    return p;
}

static void describe_plane(const TPlane *p)
{
    g_test_message("slot %u %.4s fb %ux%u pitch %u chroma %u src 0x%x,0x%x "
                   "0x%x x 0x%x dst %d,%d %ux%u ctrl 0x%x alpha 0x%x zpos %u",
                   p->slot, (const char *)&p->format, p->fb_w, p->fb_h,
                   p->pitch, p->chroma_pitch, p->src_x, p->src_y, p->src_w,
                   p->src_h, p->dst_x, p->dst_y, p->dst_w, p->dst_h, p->ctrl,
                   p->alpha, p->zpos);
}

/* The formats a writeback writes: 32-bit RGB. */
static const uint32_t wb_formats[] = {
    PVDC_FMT_XRGB8888, PVDC_FMT_ARGB8888, PVDC_FMT_XBGR8888,
    PVDC_FMT_ABGR8888, PVDC_FMT_XRGB2101010,
};
static const char *const wb_format_names[] = {
    "xrgb8888", "argb8888", "xbgr8888", "abgr8888", "xrgb2101010",
};

/*
 * Issue 35, item 6: random plane states, and writebacks, on head 0.  The
 * rules are the spec's; whatever the device applies must be drawn
 * exactly as the reference draws it: the frame CRC (and the screendump
 * when they differ), and a writeback requested in the same commit.  What
 * it refuses carries a named error.  Bilinear filtering, which the
 * reference only bounds, is left out.  Most states must apply, or the
 * property says little.
 */
static void test_applied_states_are_drawn_exactly(void)
{
    GRand *rng = g_rand_new_with_seed(35);
    unsigned int applied = 0;
    T t;

    start(&t, NULL, true);
    for (int n = 0; n < PROPERTY_STATES; n++) {
        unsigned int planes = g_rand_int_range(rng, 1, OVERLAYS + 2);
        uint32_t zpos[SLOTS] = { 0 };
        TWriteback wb;
        TScene scene = {
            .background = g_rand_int(rng) & 0xffffff,
        };
        uint32_t result;

        for (unsigned int i = 0; i < planes; i++) {
            unsigned int j = g_rand_int_range(rng, 0, i + 1);

            zpos[i] = zpos[j];
            zpos[j] = i;
        }
        for (unsigned int i = 0; i < planes; i++) {
            /* the primary plane, then overlays; framebuffer i each */
            unsigned int slot = i ? OVERLAY(i - 1) : PRIMARY;
            /* the primary takes RGB only */
            uint32_t format = pvdc_formats[g_rand_int_range(rng, 0,
                i ? ARRAY_SIZE(pvdc_formats) : PVDC_RGB_FORMATS)];

            add(&scene, random_plane(&t, rng, slot, format, i, zpos[i]));
        }
        if (g_rand_boolean(rng)) {
            wb.format = wb_formats[g_rand_int_range(rng, 0,
                                                    ARRAY_SIZE(wb_formats))];
            wb.pitch = MODE_PITCH + 4 * g_rand_int_range(rng, 0,
                                                         MODE_W + 1);
            scene.wb = &wb;
            wb_clear(&t);
        }
        g_test_message("state %d: %u planes, background 0x%x%s", n, planes,
                       scene.background, scene.wb ? ", writeback" : "");
        for (unsigned int i = 0; i < planes; i++) {
            describe_plane(&scene.planes[i]);
        }
        result = try_commit_scene(&t, 0, &scene);
        if (result != PVDC_RESULT_APPLIED) {
            g_test_message("refused: 0x%x", result);
            g_assert_cmpuint(result & PVDC_RESULT_CODE_MASK, >,
                             PVDC_RESULT_APPLIED);
            continue;
        }
        applied++;
        if (scene.wb) {
            assert_wb_is_the_frame(&t, &scene);
        } else {
            g_autofree uint32_t *want = g_new(uint32_t, MODE_W * MODE_H);
            uint32_t crc = next_frame_crc(&t, 0);

            reference(&t, &scene, want);
            if (crc != pvdc_frame_crc(want, MODE_W * MODE_H)) {
                assert_screen_is(&t, 0, &scene);
                g_assert_cmphex(crc, ==,
                                pvdc_frame_crc(want, MODE_W * MODE_H));
            }
        }
    }
    g_test_message("%u of %d states applied", applied, PROPERTY_STATES);
    g_assert_cmpuint(applied, >=, PROPERTY_STATES / 2);
    g_rand_free(rng);
    stop(&t);
}


/* ------------------------------------------------------------------------ */
/* Frames pushed to the UI at the latch                                     */
/* ------------------------------------------------------------------------ */

/*
 * A UI listening on console 0 only: a VNC display without sockets or
 * clients, which never asks for a refresh itself, so that every frame
 * console 0 gets is one the device pushed.
 */
#define ONE_LISTENER        "-vnc none"
/* Frames flipped in each case; the mode's refresh is 1 kHz. */
#define PUSH_FRAMES         6

static uint64_t console_stat(T *t, const char *what, unsigned int console)
{
    g_autofree char *prop = g_strdup_printf("x-console%u-%s", console, what);

    return pvdc_statistic(t->p.qts, prop);
}

static bool push_pending(T *t, unsigned int console)
{
    g_autofree char *prop = g_strdup_printf("x-console%u-push-pending",
                                            console);
    QDict *rsp = qtest_qmp(t->p.qts, "{ 'execute': 'qom-get', 'arguments': "
                           "{ 'path': %s, 'property': %s } }", PVDC_QOM_PATH,
                           prop);
    bool pending;

    g_assert(qdict_haskey(rsp, "return"));
    pending = qdict_get_bool(rsp, "return");
    qobject_unref(rsp);
    return pending;
}

/*
 * Return once the push a latch scheduled on @console has run, the
 * @pushes'th.  It runs from the main loop, which each QMP round trip lets
 * run: the device says when it is done, no clock is involved.
 */
static void wait_pushed(T *t, unsigned int console, uint64_t pushes)
{
    for (int i = 0; i < 100 && push_pending(t, console); i++) {
        continue;
    }
    g_assert_false(push_pending(t, console));
    g_assert_cmpuint(console_stat(t, "pushes", console), ==, pushes);
}

/*
 * Frame @i of a composed scene, in @scene, committed on head 0: the
 * primary and an overlay that moves, so that every frame shows something
 * else.
 */
static void flip_moving_overlay(T *t, TScene *scene, unsigned int i)
{
    memset(scene, 0, sizeof(*scene));
    scene->background = 0x405060;
    add(scene, plane(t, PRIMARY, PVDC_FMT_XRGB8888, 0, MODE_W, MODE_H,
                     0, 0, 0));
    add(scene, plane(t, OVERLAY(0), PVDC_FMT_XRGB8888, 1, 20, 16,
                     2 + 3 * i, 20, 1));
    commit_scene(t, 0, scene);
}

/*
 * Frame @i of a single full-screen plane flipped between two buffers, in
 * @scene, committed on head 0.
 */
static void flip_buffers(T *t, TScene *scene, unsigned int i)
{
    memset(scene, 0, sizeof(*scene));
    add(scene, plane(t, PRIMARY, PVDC_FMT_XRGB8888, 2 + i % 2, MODE_W,
                     MODE_H, 0, 0, 0));
    commit_scene(t, 0, scene);
}

/*
 * Each latched frame that changes the picture is pushed to the UI once
 * and composed once; a commit that changes nothing visible is no frame.
 * The console nobody listens to gets nothing, and costs nothing.
 */
static void test_latched_frames_are_pushed(void)
{
    TScene scene;
    T t;

    start_with(&t, NULL, ONE_LISTENER, false);
    for (unsigned int i = 0; i < PUSH_FRAMES; i++) {
        flip_moving_overlay(&t, &scene, i);
        commit_scene(&t, 1, &scene);
        wait_pushed(&t, 0, i + 1);
        g_assert_cmpuint(compositions(&t, 0), ==, i + 1);
    }
    commit_scene(&t, 0, &scene);
    wait_pushed(&t, 0, PUSH_FRAMES);
    g_assert_cmpuint(compositions(&t, 0), ==, PUSH_FRAMES);
    g_assert_cmpuint(console_stat(&t, "coalesced", 0), ==, 0);

    g_assert_cmpuint(console_stat(&t, "pushes", 1), ==, 0);
    g_assert_cmpuint(compositions(&t, 1), ==, 0);
    /* The UI was handed the last frame. */
    assert_screen_is(&t, 0, &scene);
    g_assert_cmpuint(compositions(&t, 0), ==, PUSH_FRAMES);
    stop(&t);
}

/*
 * A full-screen plane flipped between two buffers is shown straight from
 * VRAM: each flip replaces the surface, and the UI is told to draw it.
 */
static void test_direct_flips_are_pushed(void)
{
    TScene scene;
    T t;

    start_with(&t, NULL, ONE_LISTENER, false);
    for (unsigned int i = 0; i < PUSH_FRAMES; i++) {
        flip_buffers(&t, &scene, i);
        wait_pushed(&t, 0, i + 1);
    }
    g_assert_cmpuint(compositions(&t, 0), ==, 0);
    assert_screen_is(&t, 0, &scene);
    stop(&t);
}

/* Without a UI, frames latched are neither composed nor pushed. */
static void test_no_listener_no_push(void)
{
    uint64_t callbacks;
    TScene scene;
    T t;

    start(&t, NULL, false);
    /* a push scheduled would stay pending: none is */
    pvdc_qom_set_bool(t.p.qts, "x-push-stall", true);
    for (unsigned int i = 0; i < PUSH_FRAMES; i++) {
        flip_moving_overlay(&t, &scene, i);
        g_assert_false(push_pending(&t, 0));
    }
    g_assert_cmpuint(pvdc_statistic(t.p.qts, "x-compositions"), ==, 0);
    g_assert_cmpuint(console_stat(&t, "pushes", 0), ==, 0);
    /* and once the guest stops, the device does nothing more */
    callbacks = pvdc_timer_callbacks(&t.p);
    pvdc_step_to(&t.p, t.p.now + 50 * PERIOD_1MS);
    g_assert_cmpuint(pvdc_timer_callbacks(&t.p), ==, callbacks);
    g_assert_cmpuint(pvdc_statistic(t.p.qts, "x-compositions"), ==, 0);
    stop(&t);
}

/*
 * Behind a UI that has not taken the last push, latches do not wait and
 * do not queue: they fold into the push pending, which shows the last.
 */
static void test_slow_listener_coalesces(void)
{
    TScene scene;
    T t;

    start_with(&t, NULL, ONE_LISTENER, false);
    flip_moving_overlay(&t, &scene, 0);
    wait_pushed(&t, 0, 1);

    pvdc_qom_set_bool(t.p.qts, "x-push-stall", true);
    for (unsigned int i = 1; i <= PUSH_FRAMES; i++) {
        flip_moving_overlay(&t, &scene, i);
    }
    g_assert_true(push_pending(&t, 0));
    g_assert_cmpuint(console_stat(&t, "pushes", 0), ==, 1);
    g_assert_cmpuint(console_stat(&t, "coalesced", 0), ==, PUSH_FRAMES - 1);
    g_assert_cmpuint(compositions(&t, 0), ==, 1);
    g_assert_cmpuint(pvdc_statistic(t.p.qts, "x-commits-applied"), ==,
                     PUSH_FRAMES + 1);

    pvdc_qom_set_bool(t.p.qts, "x-push-stall", false);
    wait_pushed(&t, 0, 2);
    g_assert_cmpuint(compositions(&t, 0), ==, 2);
    /* what was pushed is the last frame: nothing is left to compose */
    assert_screen_is(&t, 0, &scene);
    g_assert_cmpuint(compositions(&t, 0), ==, 2);
    stop(&t);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);

    for (size_t i = 0; i < ARRAY_SIZE(scene_cases); i++) {
        g_autofree char *path =
            g_strdup_printf("/pvdc/compose/crc/%s", scene_cases[i].name);

        qtest_add_data_func(path, &scene_cases[i], test_scene_crc);
    }
    for (size_t i = 0; i < YCBCR_MATRIX; i++) {
        size_t f = i / (ARRAY_SIZE(encoding_names) * 2);
        unsigned int encoding = i / 2 % ARRAY_SIZE(encoding_names);
        bool full = i % 2;
        uint32_t *arg = ycbcr_matrix_args[i];
        g_autofree char *path =
            g_strdup_printf("/pvdc/compose/crc/ycbcr/%s-%s-%s",
                            two_plane_names[f], encoding_names[encoding],
                            full ? "full" : "limited");

        arg[0] = two_plane_formats[f];
        arg[1] = ENCODING(encoding) | (full ? FULL : 0);
        ycbcr_matrix_cases[i] = (SceneCase) { NULL, build_ycbcr, arg };
        qtest_add_data_func(path, &ycbcr_matrix_cases[i], test_scene_crc);
    }
    for (size_t i = 0; i < ARRAY_SIZE(color_cases); i++) {
        g_autofree char *path =
            g_strdup_printf("/pvdc/compose/color/%s", color_cases[i].name);

        qtest_add_data_func(path, &color_cases[i],
                            test_color_matches_reference);
    }
    qtest_add_func("/pvdc/compose/color/identity-is-no-pipeline",
                   test_color_identity_is_no_pipeline);
    qtest_add_func("/pvdc/compose/color/known-lut-inverts",
                   test_color_known_lut);
    qtest_add_func("/pvdc/compose/color/tables-copied-at-the-doorbell",
                   test_color_copied_at_the_doorbell);
    qtest_add_func("/pvdc/compose/color/direct-scanout-off-and-on",
                   test_color_turns_direct_scanout_off_and_on);
    for (size_t i = 0; i < ARRAY_SIZE(wb_formats); i++) {
        g_autofree char *path =
            g_strdup_printf("/pvdc/compose/writeback/%s-is-the-frame-shown",
                            wb_format_names[i]);

        qtest_add_data_func(path, &wb_formats[i], test_wb_format);
    }
    qtest_add_func("/pvdc/compose/property/applied-states-are-drawn-exactly",
                   test_applied_states_are_drawn_exactly);
    qtest_add_func("/pvdc/compose/writeback/written-once-at-the-latch",
                   test_wb_written_once_at_the_latch);
    qtest_add_func("/pvdc/compose/writeback/target-is-marked-dirty",
                   test_wb_target_is_marked_dirty);
    qtest_add_func("/pvdc/compose/writeback/over-budget-defers-the-latch",
                   test_wb_budget_defers_the_latch);
    qtest_add_func("/pvdc/compose/crc/frame-follows-the-vblank-count",
                   test_crc_frame_follows_vblank_count);
    qtest_add_func("/pvdc/compose/screendump/bilinear-upscale-is-within-2",
                   test_bilinear_upscale_is_within_tolerance);
    qtest_add_func("/pvdc/compose/screendump/two-heads-match-pixel-by-pixel",
                   test_two_heads_match_pixel_by_pixel);
    qtest_add_func("/pvdc/compose/screendump/disabled-head-is-blank",
                   test_disabled_head_is_blank);
    qtest_add_func("/pvdc/compose/dirty/idle-guest-costs-no-composition",
                   test_idle_guest_costs_no_composition);
    qtest_add_func("/pvdc/compose/dirty/vram-write-recomposes-once",
                   test_vram_write_recomposes_what_it_touched);
    qtest_add_func("/pvdc/compose/dirty/direct-scanout-needs-no-composition",
                   test_direct_scanout_needs_no_composition);
    qtest_add_func("/pvdc/compose/dirty/ycbcr-is-composed-and-its-chroma-"
                   "tracked", test_ycbcr_is_composed_and_its_chroma_tracked);
    qtest_add_func("/pvdc/compose/scale/tiny-source-fills-the-largest-mode",
                   test_tiny_source_fills_the_largest_mode);
    qtest_add_func("/pvdc/compose/cursor/host-cursor-is-not-composed",
                   test_host_cursor_is_not_composed);
    qtest_add_func("/pvdc/compose/routing/console-shows-the-head-driving-it",
                   test_console_shows_the_head_driving_it);
    qtest_add_func("/pvdc/compose/routing/console-takes-the-size-of-its-head",
                   test_console_takes_the_size_of_its_head);
    qtest_add_func("/pvdc/compose/routing/vram-write-updates-the-routed-"
                   "console", test_vram_write_updates_the_routed_console);
    qtest_add_func("/pvdc/compose/routing/host-cursor-follows-the-route",
                   test_host_cursor_follows_the_route);
    qtest_add_func("/pvdc/compose/push/latched-frames-are-pushed",
                   test_latched_frames_are_pushed);
    qtest_add_func("/pvdc/compose/push/direct-flips-are-pushed",
                   test_direct_flips_are_pushed);
    qtest_add_func("/pvdc/compose/push/no-listener-no-push",
                   test_no_listener_no_push);
    qtest_add_func("/pvdc/compose/push/slow-listener-coalesces",
                   test_slow_listener_coalesces);
    qtest_add_func("/pvdc/output/hotplug-belongs-to-the-connector",
                   test_hotplug_belongs_to_the_connector);
    qtest_add_func("/pvdc/output/migration-keeps-connectors-and-crc",
                   test_migration_keeps_connectors_and_crc);
    qtest_add_func("/pvdc/output/property-change-raises-hotplug",
                   test_hotplug_on_property_change);
    qtest_add_func("/pvdc/output/per-head-properties-at-start",
                   test_per_head_properties_at_start);
    qtest_add_func("/pvdc/output/properties-of-missing-heads-fail-realize",
                   test_properties_of_missing_heads_fail_realize);

    return g_test_run();
}
