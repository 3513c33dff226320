/*
 * pvdc: paravirtual display controller - colour pipeline of a head.
 *
 * After blending, every pixel of a head goes through DEGAMMA_LUT, CTM and
 * GAMMA_LUT, in that order, with the semantics of the DRM colour
 * management properties (drm_color_mgmt.c).  Each stage works at the
 * precision of the LUT entries, 16 bits per channel, rounding to nearest:
 *
 *   input     the blended 8-bit channel c stands for c / 255, in 16 bits
 *             257 * c (exact)
 *   DEGAMMA   N entries evenly spaced over 0..1: c falls at position
 *             p = c * (N - 1) / 255; the output interpolates linearly
 *             between entries floor(p) and floor(p) + 1 and is rounded
 *             to 16 bits; without a LUT it is 257 * c
 *   CTM       out_i = sum_j ctm[3 i + j] * in_j, coefficients S31.32
 *             sign-magnitude clamped like drm_color_ctm_s31_32_to_qm_n(
 *             value, 14, 32) does (to -2^13 .. 2^13 - 2^-32, far beyond
 *             any colour conversion, so that the exact sum fits in 64
 *             bits), rounded to 16 bits (halves up) and clamped to
 *             0..0xffff; without a matrix it is the identity
 *   GAMMA     like DEGAMMA with the 16-bit value v at p = v * (N - 1) /
 *             65535; without a LUT it is v
 *   output    the 16-bit value v becomes (v * 255 + 32767) / 65535
 *
 * The divisions by 255 and 65535 are odd, so "to nearest" never meets a
 * tie.  Identity LUTs (entry i = i * 0xffff / (N - 1), rounded either
 * way) and the identity matrix give back exactly the input.
 *
 * Deriving the pipeline turns it into tables, so that applying it costs
 * the same whatever the LUT sizes: without a matrix each channel is one
 * 256-entry table of the whole pipeline; with one, nine 256-entry tables
 * of products and a 65536-entry gamma table per channel, which leaves
 * three lookups and two additions per channel and pixel.  A pipeline that
 * changes nothing (no stage, or identity stages) is not applied at all.
 * The gamma tables of a pipeline with a matrix, most of the cost of
 * deriving it, are derived at the first composition that applies it, not
 * when the device copies the pipeline in: that happens inside the guest's
 * register write that arms a commit, and a pipeline may be replaced
 * before it is ever shown.  They map 65536 values to 256, so they are
 * filled a step of the staircase at a time (see pvdc_gamma_fill()), not
 * by evaluating the LUT 3 x 65536 times; how many evaluations that took
 * is counted, for the device to charge them to whoever asked.
 *
 * Copyright (c) 2026 The pvdc authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/host-utils.h"
#include "pvdc-compose-internal.h"

/* CTM coefficients as Q14.32: the largest magnitude, 2^13. */
#define PVDC_CTM_MAX            (1ull << 45)
#define PVDC_CTM_ONE            (1ll << 32)

typedef uint8_t PVDCGammaTable[65536];

struct PVDCComposeColor {
    bool active;                /* some pixel value changes */
    bool ctm;                   /* the matrix is not the identity */
    /* without a matrix: the whole pipeline, per channel */
    uint8_t lut[3][256];
    /* with a matrix: coefficient (i, j) times DEGAMMA_j(c), 32 fraction bits */
    int64_t product[3][3][256];
    /*
     * with a matrix: GAMMA_i and the output conversion, per 16-bit value,
     * derived from the copy of the GAMMA_LUT (@gamma_lut, NULL for none)
     * when first applied
     */
    PVDCGammaTable *gamma;
    PVDCComposeLutEntry *gamma_lut;
    uint32_t gamma_size;
    /* LUT evaluations spent on @gamma */
    uint64_t gamma_evaluations;
};

static uint16_t pvdc_lut_channel(const PVDCComposeLutEntry *e, unsigned int i)
{
    return i == 0 ? e->red : i == 1 ? e->green : e->blue;
}

/*
 * Channel @ch of @lut (@size entries) at the input @v / @max, interpolated
 * and rounded to 16 bits.
 */
static uint16_t pvdc_lut_eval(const PVDCComposeLutEntry *lut, uint32_t size,
                              unsigned int ch, uint32_t v, uint32_t max)
{
    uint64_t pos = (uint64_t)v * (size - 1);
    uint32_t i = pos / max, r = pos % max;
    uint64_t a = pvdc_lut_channel(&lut[i], ch), b;

    if (!r) {
        return a;
    }
    b = pvdc_lut_channel(&lut[i + 1], ch);
    return (a * (max - r) + b * r + max / 2) / max;
}

static uint8_t pvdc_color_out8(uint32_t v)
{
    return (v * 255 + 32767) / 65535;
}

static uint16_t pvdc_color_degamma(const PVDCComposeColorDesc *desc,
                                   unsigned int ch, uint32_t c)
{
    return desc->degamma ?
           pvdc_lut_eval(desc->degamma, desc->degamma_size, ch, c, 255) :
           c * 257;
}

static uint8_t pvdc_color_gamma(const PVDCComposeColorDesc *desc,
                                unsigned int ch, uint32_t v)
{
    return pvdc_color_out8(desc->gamma ?
                           pvdc_lut_eval(desc->gamma, desc->gamma_size, ch, v,
                                         65535) : v);
}

/* S31.32 sign-magnitude to two's complement, clamped to Q14.32. */
static int64_t pvdc_ctm_coefficient(uint64_t value)
{
    uint64_t mag = value & ~(1ull << 63);

    if (value >> 63) {
        return -(int64_t)MIN(mag, PVDC_CTM_MAX);
    }
    return MIN(mag, PVDC_CTM_MAX - 1);
}

static bool pvdc_lut_size_ok(const PVDCComposeLutEntry *lut, uint32_t size)
{
    return !lut || (size >= PVDC_LUT_MIN_SIZE &&
                    size <= PVDC_LUT_MAX_SIZE);
}

PVDCComposeColor *pvdc_compose_color_new(const PVDCComposeColorDesc *desc)
{
    PVDCComposeColor *color;
    int64_t ctm[9];

    if (!pvdc_lut_size_ok(desc->degamma, desc->degamma_size) ||
        !pvdc_lut_size_ok(desc->gamma, desc->gamma_size)) {
        return NULL;
    }
    color = g_new0(PVDCComposeColor, 1);

    /* row-major 3x3: indices 0, 4 and 8 are the diagonal */
    for (unsigned int i = 0; i < 9; i++) {
        ctm[i] = desc->ctm ? pvdc_ctm_coefficient(desc->ctm[i]) :
                 i % 4 ? 0 : PVDC_CTM_ONE;
        color->ctm |= ctm[i] != (i % 4 ? 0 : PVDC_CTM_ONE);
    }

    if (!color->ctm) {
        for (unsigned int ch = 0; ch < 3; ch++) {
            for (uint32_t c = 0; c < 256; c++) {
                color->lut[ch][c] =
                    pvdc_color_gamma(desc, ch, pvdc_color_degamma(desc, ch, c));
                color->active |= color->lut[ch][c] != c;
            }
        }
        return color;
    }

    /* |coefficient| <= 2^45, |value| < 2^16: three products fit in 63 bits */
    for (unsigned int i = 0; i < 3; i++) {
        for (unsigned int j = 0; j < 3; j++) {
            for (uint32_t c = 0; c < 256; c++) {
                color->product[i][j][c] = ctm[3 * i + j] *
                                          pvdc_color_degamma(desc, j, c);
            }
        }
    }
    if (desc->gamma) {
        color->gamma_lut = g_memdup2(desc->gamma, sizeof(*desc->gamma) *
                                                  desc->gamma_size);
        color->gamma_size = desc->gamma_size;
    }
    color->active = true;
    return color;
}

/*
 * pvdc_color_gamma() of the 16-bit value @v for channel @ch of @lut (@size
 * entries, NULL for none), with the divisions by 65535 written out as
 * constants: every sum below stays under 65535 * 65535 + 32767 < 2^32.
 */
static uint8_t pvdc_gamma_at(const PVDCComposeLutEntry *lut, uint32_t size,
                             unsigned int ch, uint32_t v)
{
    uint32_t pos, i, r, a, b;

    if (!lut) {
        return pvdc_color_out8(v);
    }
    pos = v * (size - 1);
    i = pos / 65535;
    r = pos % 65535;
    a = pvdc_lut_channel(&lut[i], ch);
    b = r ? pvdc_lut_channel(&lut[i + 1], ch) : a;
    return pvdc_color_out8((a * (65535 - r) + b * r + 32767) / 65535);
}

/* The first 16-bit value whose position in @size entries is >= entry @k. */
static uint32_t pvdc_gamma_entry_start(uint32_t k, uint32_t size)
{
    return (k * 65535 + size - 2) / (size - 1);
}

/*
 * Over a stretch of entries [@first, @last] that never rise or never fall,
 * the interpolation, its rounding and the output conversion never turn
 * back either: the table there is a staircase of at most 256 steps.
 */
static uint32_t pvdc_gamma_monotone_end(const PVDCComposeLutEntry *lut,
                                        uint32_t size, unsigned int ch,
                                        uint32_t first)
{
    int dir = 0;
    uint32_t k;

    for (k = first + 1; k < size; k++) {
        int step = (pvdc_lut_channel(&lut[k], ch) >
                    pvdc_lut_channel(&lut[k - 1], ch)) -
                   (pvdc_lut_channel(&lut[k], ch) <
                    pvdc_lut_channel(&lut[k - 1], ch));

        if (step && dir && step != dir) {
            break;
        }
        dir = dir ? dir : step;
    }
    return k - 1;
}

/*
 * Fill @t[@lo..@hi], where the table is monotone, one step at a time: the
 * end of each step is found by bisection, unless the steps left (at most
 * the distance between the values at both ends) would take more
 * bisecting than evaluating every value left.  So a stretch never costs
 * more evaluations than it has values.  Returns the evaluations made.
 */
static uint64_t pvdc_gamma_fill(uint8_t *t, const PVDCComposeLutEntry *lut,
                                uint32_t size, unsigned int ch, uint32_t lo,
                                uint32_t hi)
{
    uint64_t evaluations = 1;
    uint8_t y_lo, y_hi;

    t[lo] = y_lo = pvdc_gamma_at(lut, size, ch, lo);
    if (lo == hi) {
        return evaluations;
    }
    t[hi] = y_hi = pvdc_gamma_at(lut, size, ch, hi);
    evaluations++;
    while (hi - lo > 1) {
        uint32_t steps = y_hi > y_lo ? y_hi - y_lo : y_lo - y_hi;
        uint32_t l = lo, h = hi;
        uint8_t y_h = y_hi;

        if (!steps) {
            memset(t + lo + 1, y_lo, hi - lo - 1);
            break;
        }
        if ((uint64_t)steps * (32 - clz32(hi - lo)) >= hi - lo - 1) {
            for (uint32_t v = lo + 1; v < hi; v++) {
                t[v] = pvdc_gamma_at(lut, size, ch, v);
            }
            evaluations += hi - lo - 1;
            break;
        }
        while (h - l > 1) {
            uint32_t m = l + (h - l) / 2;
            uint8_t y_m = pvdc_gamma_at(lut, size, ch, m);

            evaluations++;
            if (y_m == y_lo) {
                l = m;
            } else {
                h = m;
                y_h = y_m;
            }
        }
        memset(t + lo + 1, y_lo, l - lo);
        t[h] = y_h;
        lo = h;
        y_lo = y_h;
    }
    return evaluations;
}

/* The gamma tables of a pipeline with a matrix, derived on first use. */
static void pvdc_color_derive_gamma(PVDCComposeColor *color)
{
    const PVDCComposeLutEntry *lut = color->gamma_lut;
    uint32_t size = color->gamma_size;

    if (color->gamma) {
        return;
    }
    color->gamma = g_new(PVDCGammaTable, 3);
    for (unsigned int ch = 0; ch < 3; ch++) {
        uint32_t first = 0, last;

        if (!lut) {
            color->gamma_evaluations +=
                pvdc_gamma_fill(color->gamma[ch], NULL, 0, ch, 0, 65535);
            continue;
        }
        /* stretches share their end entries; each fills up to the next */
        do {
            last = pvdc_gamma_monotone_end(lut, size, ch, first);
            color->gamma_evaluations +=
                pvdc_gamma_fill(color->gamma[ch], lut, size, ch,
                                pvdc_gamma_entry_start(first, size),
                                last == size - 1 ? 65535 :
                                pvdc_gamma_entry_start(last, size) - 1);
            first = last;
        } while (last < size - 1);
    }
}

uint64_t pvdc_compose_color_evaluations(const PVDCComposeColor *color)
{
    return color ? color->gamma_evaluations : 0;
}

void pvdc_compose_color_free(PVDCComposeColor *color)
{
    if (color) {
        g_free(color->gamma);
        g_free(color->gamma_lut);
        g_free(color);
    }
}

bool pvdc_compose_color_active(const PVDCComposeColor *color)
{
    return color && color->active;
}

static inline uint32_t pvdc_color_ctm_channel(const PVDCComposeColor *color,
                                              unsigned int i, uint32_t r,
                                              uint32_t g, uint32_t b)
{
    int64_t sum = color->product[i][0][r] + color->product[i][1][g] +
                  color->product[i][2][b];
    int64_t v = (sum + (1ll << 31)) >> 32;

    return color->gamma[i][v < 0 ? 0 : v > 0xffff ? 0xffff : v];
}

/* One line of @n pixels: the matrix needs the three channels at once. */
static void pvdc_color_line_ctm(const PVDCComposeColor *color, uint32_t *p,
                                int32_t n)
{
    for (int32_t i = 0; i < n; i++) {
        uint32_t r = p[i] >> 16 & 0xff, g = p[i] >> 8 & 0xff, b = p[i] & 0xff;

        p[i] = (p[i] & 0xff000000) |
               pvdc_color_ctm_channel(color, 0, r, g, b) << 16 |
               pvdc_color_ctm_channel(color, 1, r, g, b) << 8 |
               pvdc_color_ctm_channel(color, 2, r, g, b);
    }
}

static void pvdc_color_line_lut(const PVDCComposeColor *color, uint32_t *p,
                                int32_t n)
{
    for (int32_t i = 0; i < n; i++) {
        p[i] = (p[i] & 0xff000000) | color->lut[0][p[i] >> 16 & 0xff] << 16 |
               color->lut[1][p[i] >> 8 & 0xff] << 8 |
               color->lut[2][p[i] & 0xff];
    }
}

void pvdc_compose_color_apply(const PVDCComposeColor *color,
                              pixman_image_t *dst, int32_t x, int32_t y,
                              int32_t w, int32_t h)
{
    uint8_t *data = (uint8_t *)pixman_image_get_data(dst);
    size_t stride = pixman_image_get_stride(dst);

    if (!pvdc_compose_color_active(color)) {
        return;
    }
    if (color->ctm) {
        /*
         * Scenes hold their pipeline const: deriving its tables caches
         * what it is, the pipeline stays the same.  Compositions all run
         * under the BQL, one at a time.
         */
        pvdc_color_derive_gamma((PVDCComposeColor *)color);
    }
    for (int32_t row = y; row < y + h; row++) {
        uint32_t *p = (uint32_t *)(data + stride * row) + x;

        if (color->ctm) {
            pvdc_color_line_ctm(color, p, w);
        } else {
            pvdc_color_line_lut(color, p, w);
        }
    }
}
