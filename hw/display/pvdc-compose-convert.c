/*
 * pvdc: paravirtual display controller - framebuffer format conversion.
 *
 * The formats pixman cannot read, or reads far too slowly, are converted
 * line by line into host-endian XRGB8888 before they are scaled and
 * blended like any RGB plane.  pixman's PIXMAN_yuy2 fetcher took 177 ms
 * to show a 1280x720 YUYV plane at 1920x1080 with bilinear filtering and
 * its wide pipeline 42 ms for a 1920x1080 XRGB2101010 plane, against
 * 7 ms and 3.6 ms converted (same machine; a 1920x1080 XRGB8888 plane
 * takes 1.4 ms).  Converting also makes every format independent of the
 * host's byte order, which pixman's are not.
 *
 * YCbCr to R'G'B'
 * ---------------
 * An encoding defines luma and colour differences from R'G'B' in 0..1 by
 * two constants Kr and Kb (Kg = 1 - Kr - Kb):
 *
 *   E'Y = Kr R' + Kg G' + Kb B'
 *   E'Cb = (B' - E'Y) / (2 (1 - Kb)),  E'Cr = (R' - E'Y) / (2 (1 - Kr))
 *
 * with Kr, Kb = 0.299, 0.114 (BT.601), 0.2126, 0.0722 (BT.709) and
 * 0.2627, 0.0593 (BT.2020, non-constant luminance).  Solved for R'G'B':
 *
 *   R' = E'Y + 2 (1 - Kr) E'Cr
 *   G' = E'Y - 2 Kb (1 - Kb) / Kg E'Cb - 2 Kr (1 - Kr) / Kg E'Cr
 *   B' = E'Y + 2 (1 - Kb) E'Cb
 *
 * Components of n bits are quantised (BT.601/709/2020 for the limited
 * range, BT.2100 for the full range) as
 *
 *   limited  Y = 2^(n-8) (219 E'Y + 16),  C = 2^(n-8) (224 E'C + 128)
 *   full     Y = (2^n - 1) E'Y,           C = (2^n - 1) E'C + 2^(n-1)
 *
 * so E'Y = (Y - y_off) / y_scale and E'C = (C - c_off) / c_scale.  The
 * output has 8 bits (R = 255 R'), which makes each coefficient a constant
 * times 255 / scale, rounded once to 16.16:
 *
 *   y   = round(2^16 * 255 / y_scale)
 *   r_v = round(2^16 * 255 * 2 (1 - Kr) / c_scale)
 *   g_u = round(2^16 * 255 * 2 Kb (1 - Kb) / (Kg c_scale))
 *   g_v = round(2^16 * 255 * 2 Kr (1 - Kr) / (Kg c_scale))
 *   b_u = round(2^16 * 255 * 2 (1 - Kb) / c_scale)
 *
 * computed below in exact integer arithmetic from Kr and Kb in units of
 * 1/10000 (how the standards give them), rounding halves up.  For BT.601
 * limited range at 8 bits this gives 76309, 104597, 25675, 53279 and
 * 132201, the constants YUYV has always been converted with.  The error
 * of a rounded coefficient is at most 2^-17 per unit of input, so the
 * result stays within one step of the exact conversion rounded.
 *
 * Chroma siting
 * -------------
 * YUYV pixels take the chroma of their macropixel, as packed 4:2:2
 * formats do on upstream display hardware.  NV12 and P010 use the MPEG-2
 * siting of video decoders (and of i915, the upstream driver that sets
 * it): a chroma sample sits on the even luma column of its pair and
 * halfway between the two luma lines of its pair.  The upsampler
 * interpolates linearly from there: an even pixel takes its column's
 * chroma, an odd pixel the mean of its two neighbours, and a line 3/4 of
 * its own chroma line and 1/4 of the nearer other one, all in eighths, so
 * that no rounding happens before the conversion.  At the edges of the
 * plane's source rectangle the edge samples repeat.
 *
 * Copyright (c) 2026 The pvdc authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "pvdc-compose-internal.h"

/* Kr and Kb of each encoding, in units of 1/10000. */
static const struct {
    int64_t kr;
    int64_t kb;
} pvdc_compose_kr_kb[PVDC_COMPOSE_ENCODING__MAX] = {
    [PVDC_COMPOSE_BT601] = { 2990, 1140 },
    [PVDC_COMPOSE_BT709] = { 2126, 722 },
    [PVDC_COMPOSE_BT2020] = { 2627, 593 },
};

/* Indexed by encoding, range and (depth - 8) / 2. */
static PVDCComposeYuv pvdc_compose_yuv_table[PVDC_COMPOSE_ENCODING__MAX]
                                            [PVDC_COMPOSE_RANGE__MAX][2];

/* num / den rounded to nearest, halves up; both positive. */
static int32_t pvdc_compose_div_round(int64_t num, int64_t den)
{
    return (2 * num + den) / (2 * den);
}

static void pvdc_compose_yuv_derive(PVDCComposeYuv *c, int64_t kr, int64_t kb,
                                    bool full, unsigned int depth)
{
    const int64_t one = 10000, out = 255 << 16;
    int64_t kg = one - kr - kb;
    int64_t y_scale = full ? (1 << depth) - 1 : 219 << (depth - 8);
    int64_t c_scale = full ? (1 << depth) - 1 : 224 << (depth - 8);

    c->y_off = full ? 0 : 16 << (depth - 8);
    c->c_off = 1 << (depth - 1);
    c->y = pvdc_compose_div_round(out, y_scale);
    c->r_v = pvdc_compose_div_round(out * 2 * (one - kr), one * c_scale);
    c->g_u = pvdc_compose_div_round(out * 2 * kb * (one - kb),
                                    kg * one * c_scale);
    c->g_v = pvdc_compose_div_round(out * 2 * kr * (one - kr),
                                    kg * one * c_scale);
    c->b_u = pvdc_compose_div_round(out * 2 * (one - kb), one * c_scale);
}

const PVDCComposeYuv *pvdc_compose_yuv(PVDCComposeEncoding encoding,
                                       PVDCComposeRange range,
                                       unsigned int depth)
{
    static gsize done;

    if (g_once_init_enter(&done)) {
        for (int e = 0; e < PVDC_COMPOSE_ENCODING__MAX; e++) {
            for (int r = 0; r < PVDC_COMPOSE_RANGE__MAX; r++) {
                for (int d = 0; d < 2; d++) {
                    pvdc_compose_yuv_derive(&pvdc_compose_yuv_table[e][r][d],
                                            pvdc_compose_kr_kb[e].kr,
                                            pvdc_compose_kr_kb[e].kb,
                                            r == PVDC_COMPOSE_RANGE_FULL,
                                            8 + 2 * d);
                }
            }
        }
        g_once_init_leave(&done, 1);
    }
    assert(encoding < PVDC_COMPOSE_ENCODING__MAX &&
           range < PVDC_COMPOSE_RANGE__MAX && (depth == 8 || depth == 10));
    return &pvdc_compose_yuv_table[encoding][range][(depth - 8) / 2];
}

static inline uint32_t pvdc_compose_clamp8(int32_t v)
{
    return v < 0 ? 0 : v > 255 ? 255 : v;
}

/*
 * The chroma of a pixel as the terms its three channels add, from @u and
 * @v in units of 1 / @unit (all terms must end up in eighths).
 */
typedef struct PVDCComposeChroma {
    int32_t r, g, b;
} PVDCComposeChroma;

static inline PVDCComposeChroma pvdc_compose_chroma(const PVDCComposeYuv *k,
                                                    int32_t u, int32_t v,
                                                    int32_t unit)
{
    PVDCComposeChroma c;

    u -= unit * k->c_off;
    v -= unit * k->c_off;
    c.r = k->r_v * v;
    c.g = -k->g_u * u - k->g_v * v;
    c.b = k->b_u * u;
    return c;
}

/* Two samples in quarters make one in eighths: the terms add up. */
static inline PVDCComposeChroma pvdc_compose_chroma_add(PVDCComposeChroma a,
                                                        PVDCComposeChroma b)
{
    PVDCComposeChroma c = { a.r + b.r, a.g + b.g, a.b + b.b };

    return c;
}

static inline uint32_t pvdc_compose_yuv_pixel(const PVDCComposeYuv *k,
                                              int32_t luma,
                                              PVDCComposeChroma c)
{
    int32_t l = k->y * 8 * (luma - k->y_off) + (1 << 18);

    return 0xff000000 | pvdc_compose_clamp8((l + c.r) >> 19) << 16 |
           pvdc_compose_clamp8((l + c.g) >> 19) << 8 |
           pvdc_compose_clamp8((l + c.b) >> 19);
}

/* Bit replication widens each channel: r8 = r5 << 3 | r5 >> 2. */
void pvdc_compose_convert_rgb565(const PVDCComposeReader *rd, uint32_t *out,
                                 uint32_t x, uint32_t y, uint32_t width)
{
    const PVDCComposePlane *p = rd->plane;
    const uint8_t *line = rd->vram + p->offset + (uint64_t)p->pitch * y;

    for (uint32_t i = 0; i < width; i++) {
        uint32_t v = lduw_le_p(line + (x + i) * 2);
        uint32_t r = v >> 11, g = v >> 5 & 0x3f, b = v & 0x1f;

        out[i] = 0xff000000 | (r << 3 | r >> 2) << 16 |
                 (g << 2 | g >> 4) << 8 | (b << 3 | b >> 2);
    }
}

/* The 8 most significant bits of each 10-bit channel. */
void pvdc_compose_convert_xrgb2101010(const PVDCComposeReader *rd,
                                      uint32_t *out, uint32_t x, uint32_t y,
                                      uint32_t width)
{
    const PVDCComposePlane *p = rd->plane;
    const uint8_t *line = rd->vram + p->offset + (uint64_t)p->pitch * y;

    for (uint32_t i = 0; i < width; i++) {
        uint32_t v = ldl_le_p(line + (x + i) * 4);

        out[i] = 0xff000000 | (v >> 6 & 0xff0000) | (v >> 4 & 0xff00) |
                 (v >> 2 & 0xff);
    }
}

/* Y0 Cb Y1 Cr: both pixels of a macropixel take its chroma. */
void pvdc_compose_convert_yuyv(const PVDCComposeReader *rd, uint32_t *out,
                               uint32_t x, uint32_t y, uint32_t width)
{
    const PVDCComposePlane *p = rd->plane;
    const PVDCComposeYuv *k = rd->yuv;
    const uint8_t *in = rd->vram + p->offset + (uint64_t)p->pitch * y +
                        (x & ~1u) * 2;
    PVDCComposeChroma c;

    if (x & 1 && width) {
        c = pvdc_compose_chroma(k, 8 * in[1], 8 * in[3], 8);
        *out++ = pvdc_compose_yuv_pixel(k, in[2], c);
        in += 4;
        width--;
    }
    for (; width >= 2; width -= 2, out += 2, in += 4) {
        c = pvdc_compose_chroma(k, 8 * in[1], 8 * in[3], 8);
        out[0] = pvdc_compose_yuv_pixel(k, in[0], c);
        out[1] = pvdc_compose_yuv_pixel(k, in[2], c);
    }
    if (width) {
        c = pvdc_compose_chroma(k, 8 * in[1], 8 * in[3], 8);
        *out = pvdc_compose_yuv_pixel(k, in[0], c);
    }
}

/*
 * Chroma sample @i of a line of NV12 (or, if @wide, P010) interpolated
 * between chroma lines @c0 (weight 3/4) and @c1 (1/4): in quarters.
 */
static inline PVDCComposeChroma pvdc_compose_nv_chroma(const PVDCComposeYuv *k,
                                                       const uint8_t *c0,
                                                       const uint8_t *c1,
                                                       uint32_t i, bool wide)
{
    int32_t u, v;

    if (wide) {
        u = 3 * (lduw_le_p(c0 + i * 4) >> 6) + (lduw_le_p(c1 + i * 4) >> 6);
        v = 3 * (lduw_le_p(c0 + i * 4 + 2) >> 6) +
            (lduw_le_p(c1 + i * 4 + 2) >> 6);
    } else {
        u = 3 * c0[i * 2] + c1[i * 2];
        v = 3 * c0[i * 2 + 1] + c1[i * 2 + 1];
    }
    return pvdc_compose_chroma(k, u, v, 4);
}

static inline int32_t pvdc_compose_nv_luma(const uint8_t *line, uint32_t i,
                                           bool wide)
{
    return wide ? lduw_le_p(line + i * 2) >> 6 : line[i];
}

/* NV12 and P010 (@wide: 16-bit components, 10 bits used). */
static inline void pvdc_compose_convert_nv(const PVDCComposeReader *rd,
                                           uint32_t *out, uint32_t x,
                                           uint32_t y, uint32_t width,
                                           bool wide)
{
    const PVDCComposePlane *p = rd->plane;
    const PVDCComposeYuv *k = rd->yuv;
    const uint8_t *luma = rd->vram + p->offset + (uint64_t)p->pitch * y;
    uint32_t row = y / 2, other, j = x / 2, last = rd->cx1 - 1;
    uint32_t end = x + width;
    const uint8_t *c0, *c1;
    PVDCComposeChroma cur, next;

    /*
     * Chroma line @row sits half a line below luma line 2 * row: the
     * other line to interpolate from is the one above for even luma
     * lines, below for odd ones (the edge line stands in for it).
     */
    other = y & 1 ? MIN(row + 1, rd->cy1 - 1) : MAX(row, rd->cy0 + 1) - 1;
    c0 = rd->vram + p->chroma_offset + (uint64_t)p->chroma_pitch * row;
    c1 = rd->vram + p->chroma_offset + (uint64_t)p->chroma_pitch * other;

    cur = pvdc_compose_nv_chroma(k, c0, c1, j, wide);
    if (x & 1) {
        next = pvdc_compose_nv_chroma(k, c0, c1, MIN(j + 1, last), wide);
        *out++ = pvdc_compose_yuv_pixel(k, pvdc_compose_nv_luma(luma, x, wide),
                                        pvdc_compose_chroma_add(cur, next));
        cur = next;
        j++;
        x++;
    }
    for (; x + 1 < end; x += 2, j++, out += 2) {
        next = pvdc_compose_nv_chroma(k, c0, c1, MIN(j + 1, last), wide);
        out[0] = pvdc_compose_yuv_pixel(k, pvdc_compose_nv_luma(luma, x, wide),
                                        pvdc_compose_chroma_add(cur, cur));
        out[1] = pvdc_compose_yuv_pixel(k,
                                        pvdc_compose_nv_luma(luma, x + 1, wide),
                                        pvdc_compose_chroma_add(cur, next));
        cur = next;
    }
    if (x < end) {
        *out = pvdc_compose_yuv_pixel(k, pvdc_compose_nv_luma(luma, x, wide),
                                      pvdc_compose_chroma_add(cur, cur));
    }
}

void pvdc_compose_convert_nv12(const PVDCComposeReader *rd, uint32_t *out,
                               uint32_t x, uint32_t y, uint32_t width)
{
    pvdc_compose_convert_nv(rd, out, x, y, width, false);
}

void pvdc_compose_convert_p010(const PVDCComposeReader *rd, uint32_t *out,
                               uint32_t x, uint32_t y, uint32_t width)
{
    pvdc_compose_convert_nv(rd, out, x, y, width, true);
}
