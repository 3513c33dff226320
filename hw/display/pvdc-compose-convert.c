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

/*
 * The conversion is table-driven, about three times as fast as computing
 * it: L per luma value (it does not depend on the encoding), and a clamp
 * to 0..255 by lookup rather than by two data-dependent branches.  Every
 * channel gets a bias of 384 so that its index, whatever the input,
 * stays within the table (pvdc_compose_yuv_derive() checks it): the
 * channels before clamping range from -293 to 553.
 */
#define PVDC_YUV_BIAS           384
#define PVDC_YUV_CLAMP_SIZE     1024
static int32_t pvdc_compose_luma[PVDC_COMPOSE_RANGE__MAX][2][1024];
static uint8_t pvdc_compose_clamp[PVDC_YUV_CLAMP_SIZE];

/* num / den rounded to nearest, halves up; both positive. */
static int32_t pvdc_compose_div_round(int64_t num, int64_t den)
{
    return (2 * num + den) / (2 * den);
}

/* Whether (l + t) >> 19 indexes the clamp table for every l and t. */
static bool pvdc_compose_yuv_bounded(int64_t l_min, int64_t l_max,
                                     int64_t t_min, int64_t t_max)
{
    return (l_min + t_min) >> 19 >= 0 &&
           (l_max + t_max) >> 19 < PVDC_YUV_CLAMP_SIZE;
}

/* The largest shift that keeps every x in [@lo, @hi] in 16 bits. */
static int pvdc_compose_yuv_shift(int64_t lo, int64_t hi)
{
    int s = 0;

    while (lo * (2 << s) >= INT16_MIN && hi * (2 << s) <= INT16_MAX) {
        s++;
    }
    return s;
}

/* Whether @coeff >> @s fits in 16 bits (its low @s bits always do). */
static bool pvdc_compose_yuv_split_ok(int64_t coeff, int s)
{
    return coeff >> s >= INT16_MIN && coeff >> s <= INT16_MAX &&
           s < 16;
}

static void pvdc_compose_yuv_derive(PVDCComposeYuv *c, int64_t kr, int64_t kb,
                                    bool full, unsigned int depth)
{
    const int64_t one = 10000, out = 255 << 16, max = (1 << depth) - 1;
    int64_t kg = one - kr - kb;
    int64_t y_scale = full ? max : 219 << (depth - 8);
    int64_t c_scale = full ? max : 224 << (depth - 8);
    int32_t *luma = pvdc_compose_luma[full][(depth - 8) / 2];
    int64_t lo, hi;

    c->y_off = full ? 0 : 16 << (depth - 8);
    c->c_off = 1 << (depth - 1);
    c->y = pvdc_compose_div_round(out, y_scale);
    c->r_v = pvdc_compose_div_round(out * 2 * (one - kr), one * c_scale);
    c->g_u = pvdc_compose_div_round(out * 2 * kb * (one - kb),
                                    kg * one * c_scale);
    c->g_v = pvdc_compose_div_round(out * 2 * kr * (one - kr),
                                    kg * one * c_scale);
    c->b_u = pvdc_compose_div_round(out * 2 * (one - kb), one * c_scale);
    for (int64_t y = 0; y <= max; y++) {
        luma[y] = c->y * 8 * (y - c->y_off) + (1 << 18) +
                  (PVDC_YUV_BIAS << 19);
    }
    c->luma = luma;

    /* chroma in eighths spans lo..hi around its zero */
    lo = -8 * c->c_off;
    hi = 8 * (max - c->c_off);
    assert(pvdc_compose_yuv_bounded(luma[0], luma[max], c->r_v * lo,
                                    c->r_v * hi) &&
           pvdc_compose_yuv_bounded(luma[0], luma[max],
                                    -(c->g_u + c->g_v) * hi,
                                    -(c->g_u + c->g_v) * lo) &&
           pvdc_compose_yuv_bounded(luma[0], luma[max], c->b_u * lo,
                                    c->b_u * hi));

    /* the SSE2 split of each coefficient: see pvdc_sse2_coeffs() */
    c->s_y = pvdc_compose_yuv_shift(-c->y_off, max - c->y_off);
    c->s_c = pvdc_compose_yuv_shift(lo, hi);
    assert(pvdc_compose_yuv_split_ok(8 * c->y, c->s_y) &&
           pvdc_compose_yuv_split_ok(c->r_v, c->s_c) &&
           pvdc_compose_yuv_split_ok(-c->g_u, c->s_c) &&
           pvdc_compose_yuv_split_ok(-c->g_v, c->s_c) &&
           pvdc_compose_yuv_split_ok(c->b_u, c->s_c));
}

const PVDCComposeYuv *pvdc_compose_yuv(PVDCComposeEncoding encoding,
                                       PVDCComposeRange range,
                                       unsigned int depth)
{
    static gsize done;

    if (g_once_init_enter(&done)) {
        for (int i = 0; i < PVDC_YUV_CLAMP_SIZE; i++) {
            pvdc_compose_clamp[i] = MIN(MAX(i - PVDC_YUV_BIAS, 0), 255);
        }
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
                                              uint32_t luma,
                                              PVDCComposeChroma c)
{
    int32_t l = k->luma[luma];

    return 0xff000000 | pvdc_compose_clamp[(l + c.r) >> 19] << 16 |
           pvdc_compose_clamp[(l + c.g) >> 19] << 8 |
           pvdc_compose_clamp[(l + c.b) >> 19];
}

#ifdef PVDC_COMPOSE_SSE2
/*
 * pmaddwd multiplies pairs of signed 16-bit lanes and adds each pair in
 * 32 bits.  The coefficients need up to 20 bits, so each term c * x is
 * split as (x << s) * (c >> s) + x * (c & (2^s - 1)), one pmaddwd on the
 * lane pair (x << s, x): s is the largest shift that keeps x << s in 16
 * bits for every x of the depth (Y' = Y - y_off, and U, V in eighths
 * relative to their zero), and c >> s then fits too
 * (pvdc_compose_yuv_derive() checks both).  That makes luma, R and B one
 * pmaddwd per 4 pixels and G, two terms, two; every sum stays below
 * 2^29.  packssdw and packuswb then clamp to 0..255.
 */
typedef struct PVDCComposeYuvSse2 {
    __m128i y;                  /* (8 y >> s_y, 8 y & mask) */
    __m128i r;                  /* (r_v >> s_c, r_v & mask) */
    __m128i b;                  /* (b_u >> s_c, b_u & mask) */
    __m128i g_hi;               /* (-g_u >> s_c, -g_v >> s_c) */
    __m128i g_lo;               /* (-g_u & mask, -g_v & mask) */
    __m128i y_off;              /* in 16-bit lanes */
    __m128i c_off;              /* 8 * c_off, in 16-bit lanes */
    __m128i s_y, s_c;           /* the shifts, as counts */
} PVDCComposeYuvSse2;

/* (@a, @b) in every pair of 16-bit lanes */
static inline __m128i pvdc_sse2_pair(int32_t a, int32_t b)
{
    return _mm_set1_epi32((uint16_t)a | (uint32_t)b << 16);
}

static inline void pvdc_sse2_coeffs(const PVDCComposeYuv *k,
                                    PVDCComposeYuvSse2 *v)
{
    int32_t mc = (1 << k->s_c) - 1;

    v->s_y = _mm_cvtsi32_si128(k->s_y);
    v->s_c = _mm_cvtsi32_si128(k->s_c);
    v->y = pvdc_sse2_pair(8 * k->y >> k->s_y, 8 * k->y & ((1 << k->s_y) - 1));
    v->r = pvdc_sse2_pair(k->r_v >> k->s_c, k->r_v & mc);
    v->b = pvdc_sse2_pair(k->b_u >> k->s_c, k->b_u & mc);
    v->g_hi = pvdc_sse2_pair(-k->g_u >> k->s_c, -k->g_v >> k->s_c);
    v->g_lo = pvdc_sse2_pair(-k->g_u & mc, -k->g_v & mc);
    v->y_off = _mm_set1_epi16(k->y_off);
    v->c_off = _mm_set1_epi16(8 * k->c_off);
}

/* (@l + @c) >> 19 for 4 pixels, then 8 of them packed to 16 bits */
static inline __m128i pvdc_sse2_channel(__m128i l0, __m128i c0, __m128i l1,
                                        __m128i c1)
{
    return _mm_packs_epi32(_mm_srai_epi32(_mm_add_epi32(l0, c0), 19),
                           _mm_srai_epi32(_mm_add_epi32(l1, c1), 19));
}

/*
 * Eight pixels from their Y, U and V (16-bit lanes, U and V in eighths),
 * as XRGB8888 at @out.
 */
static inline QEMU_ALWAYS_INLINE
void pvdc_sse2_yuv8(const PVDCComposeYuvSse2 *k, uint32_t *out, __m128i y,
                    __m128i u, __m128i v)
{
    __m128i round = _mm_set1_epi32(1 << 18);
    __m128i ys, us, vs, l0, l1, r, g, b, br, ga, bg, ra;

    y = _mm_sub_epi16(y, k->y_off);
    u = _mm_sub_epi16(u, k->c_off);
    v = _mm_sub_epi16(v, k->c_off);
    ys = _mm_sll_epi16(y, k->s_y);
    us = _mm_sll_epi16(u, k->s_c);
    vs = _mm_sll_epi16(v, k->s_c);
    l0 = _mm_add_epi32(_mm_madd_epi16(_mm_unpacklo_epi16(ys, y), k->y),
                       round);
    l1 = _mm_add_epi32(_mm_madd_epi16(_mm_unpackhi_epi16(ys, y), k->y),
                       round);
    r = pvdc_sse2_channel(l0, _mm_madd_epi16(_mm_unpacklo_epi16(vs, v), k->r),
                          l1, _mm_madd_epi16(_mm_unpackhi_epi16(vs, v),
                                             k->r));
    b = pvdc_sse2_channel(l0, _mm_madd_epi16(_mm_unpacklo_epi16(us, u), k->b),
                          l1, _mm_madd_epi16(_mm_unpackhi_epi16(us, u),
                                             k->b));
    g = pvdc_sse2_channel(
        l0, _mm_add_epi32(_mm_madd_epi16(_mm_unpacklo_epi16(us, vs), k->g_hi),
                          _mm_madd_epi16(_mm_unpacklo_epi16(u, v), k->g_lo)),
        l1, _mm_add_epi32(_mm_madd_epi16(_mm_unpackhi_epi16(us, vs), k->g_hi),
                          _mm_madd_epi16(_mm_unpackhi_epi16(u, v), k->g_lo)));
    /* B0..B7 R0..R7 and G0..G7 0xff x 8, clamped, then interleaved */
    br = _mm_packus_epi16(b, r);
    ga = _mm_packus_epi16(g, _mm_set1_epi16(0xff));
    bg = _mm_unpacklo_epi8(br, ga);
    ra = _mm_unpackhi_epi8(br, ga);
    _mm_storeu_si128((__m128i *)out, _mm_unpacklo_epi16(bg, ra));
    _mm_storeu_si128((__m128i *)out + 1, _mm_unpackhi_epi16(bg, ra));
}
#endif

/* Bit replication widens each channel: r8 = r5 << 3 | r5 >> 2. */
void pvdc_compose_convert_rgb565(const PVDCComposeReader *rd, uint32_t *out,
                                 uint32_t x, uint32_t y, uint32_t width)
{
    const uint8_t *line = pvdc_compose_line(rd, y);

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
    const uint8_t *line = pvdc_compose_line(rd, y);

    for (uint32_t i = 0; i < width; i++) {
        uint32_t v = ldl_le_p(line + (x + i) * 4);

        out[i] = 0xff000000 | (v >> 6 & 0xff0000) | (v >> 4 & 0xff00) |
                 (v >> 2 & 0xff);
    }
}

/*
 * The inverse: each 8-bit channel v widened to 10 bits as v << 2 | v >> 6
 * (v * 1023 / 255, within half a step), whose 8 most significant bits are
 * v again; the padding bits set.
 */
void pvdc_compose_store_xrgb2101010(const uint32_t *in, uint8_t *out,
                                    uint32_t width)
{
    for (uint32_t i = 0; i < width; i++) {
        uint32_t r = in[i] >> 16 & 0xff, g = in[i] >> 8 & 0xff;
        uint32_t b = in[i] & 0xff;

        stl_le_p(out + i * 4, 3u << 30 | (r << 2 | r >> 6) << 20 |
                              (g << 2 | g >> 6) << 10 | (b << 2 | b >> 6));
    }
}

/* Y0 Cb Y1 Cr: both pixels of a macropixel take its chroma. */
void pvdc_compose_convert_yuyv(const PVDCComposeReader *rd, uint32_t *out,
                               uint32_t x, uint32_t y, uint32_t width)
{
    /* a copy: stores to @out could alias the coefficients otherwise */
    const PVDCComposeYuv coeffs = *rd->yuv, *k = &coeffs;
    const uint8_t *in = pvdc_compose_line(rd, y) +
                        (x & ~1u) * 2;
    PVDCComposeChroma c;

    if (x & 1 && width) {
        c = pvdc_compose_chroma(k, 8 * in[1], 8 * in[3], 8);
        *out++ = pvdc_compose_yuv_pixel(k, in[2], c);
        in += 4;
        width--;
    }
#ifdef PVDC_COMPOSE_SSE2
    if (width >= 8) {
        PVDCComposeYuvSse2 kv;

        pvdc_sse2_coeffs(k, &kv);
        for (; width >= 8; width -= 8, out += 8, in += 16) {
            __m128i v = _mm_loadu_si128((const __m128i *)in);
            /* Cb Cr of macropixels 0..3, in eighths */
            __m128i uv = _mm_slli_epi16(_mm_srli_epi16(v, 8), 3);
            /* each for both pixels of its macropixel */
            __m128i cb = _mm_shufflehi_epi16(_mm_shufflelo_epi16(uv, 0xa0),
                                             0xa0);
            __m128i cr = _mm_shufflehi_epi16(_mm_shufflelo_epi16(uv, 0xf5),
                                             0xf5);

            pvdc_sse2_yuv8(&kv, out, _mm_and_si128(v, _mm_set1_epi16(0xff)),
                           cb, cr);
        }
    }
#endif
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

static inline uint32_t pvdc_compose_nv_luma(const uint8_t *line, uint32_t i,
                                            bool wide)
{
    return wide ? lduw_le_p(line + i * 2) >> 6 : line[i];
}

#ifdef PVDC_COMPOSE_SSE2
/* Chroma samples @i..@i + 3, interpolated like pvdc_compose_nv_chroma(). */
static inline __m128i pvdc_sse2_nv_chroma4(const uint8_t *c0,
                                           const uint8_t *c1, uint32_t i,
                                           bool wide)
{
    __m128i zero = _mm_setzero_si128(), a, b;

    if (wide) {
        a = _mm_srli_epi16(_mm_loadu_si128((const __m128i *)(c0 + i * 4)), 6);
        b = _mm_srli_epi16(_mm_loadu_si128((const __m128i *)(c1 + i * 4)), 6);
    } else {
        a = _mm_unpacklo_epi8(_mm_loadl_epi64((const __m128i *)(c0 + i * 2)),
                              zero);
        b = _mm_unpacklo_epi8(_mm_loadl_epi64((const __m128i *)(c1 + i * 2)),
                              zero);
    }
    return _mm_add_epi16(_mm_add_epi16(a, a), _mm_add_epi16(a, b));
}

/* Luma of pixels @x..@x + 7, in 16-bit lanes. */
static inline __m128i pvdc_sse2_nv_luma8(const uint8_t *line, uint32_t x,
                                         bool wide)
{
    if (wide) {
        return _mm_srli_epi16(_mm_loadu_si128((const __m128i *)(line + x * 2)),
                              6);
    }
    return _mm_unpacklo_epi8(_mm_loadl_epi64((const __m128i *)(line + x)),
                             _mm_setzero_si128());
}
#endif

/* NV12 and P010 (@wide: 16-bit components, 10 bits used). */
static inline QEMU_ALWAYS_INLINE
void pvdc_compose_convert_nv(const PVDCComposeReader *rd, uint32_t *out,
                             uint32_t x, uint32_t y, uint32_t width,
                             bool wide)
{
    /* a copy: stores to @out could alias the coefficients otherwise */
    const PVDCComposeYuv coeffs = *rd->yuv, *k = &coeffs;
    const uint8_t *luma = pvdc_compose_line(rd, y);
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
    c0 = pvdc_compose_chroma_line(rd, row);
    c1 = pvdc_compose_chroma_line(rd, other);

    if (x & 1) {
        cur = pvdc_compose_nv_chroma(k, c0, c1, j, wide);
        next = pvdc_compose_nv_chroma(k, c0, c1, MIN(j + 1, last), wide);
        *out++ = pvdc_compose_yuv_pixel(k, pvdc_compose_nv_luma(luma, x, wide),
                                        pvdc_compose_chroma_add(cur, next));
        j++;
        x++;
    }
#ifdef PVDC_COMPOSE_SSE2
    /*
     * 8 pixels at a time need the chroma samples j..j + 4: those of the
     * next 8 are read ahead, so the loop stops while j + 7 is still a
     * sample of the source rectangle.
     */
    if (x + 8 <= end && j + 7 <= last) {
        PVDCComposeYuvSse2 kv;
        __m128i low = _mm_set1_epi32(0xffff), q, ahead, even, odd;

        pvdc_sse2_coeffs(k, &kv);
        q = pvdc_sse2_nv_chroma4(c0, c1, j, wide);
        for (; x + 8 <= end && j + 7 <= last; x += 8, j += 4, out += 8) {
            ahead = pvdc_sse2_nv_chroma4(c0, c1, j + 4, wide);
            /* even pixels take twice their sample, odd ones the sum */
            even = _mm_add_epi16(q, q);
            odd = _mm_add_epi16(q, _mm_or_si128(_mm_srli_si128(q, 4),
                                                _mm_slli_si128(ahead, 12)));
            /* (Cb, Cr) pairs, even and odd pixels, to Cb and Cr lanes */
            pvdc_sse2_yuv8(&kv, out, pvdc_sse2_nv_luma8(luma, x, wide),
                           _mm_or_si128(_mm_and_si128(even, low),
                                        _mm_slli_epi32(odd, 16)),
                           _mm_or_si128(_mm_srli_epi32(even, 16),
                                        _mm_andnot_si128(low, odd)));
            q = ahead;
        }
    }
#endif
    cur = pvdc_compose_nv_chroma(k, c0, c1, j, wide);
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
