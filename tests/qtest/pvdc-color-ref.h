/*
 * Reference model of a head's colour pipeline, written from
 * docs/specs/pvdc.rst ("Colour pipeline") in floating point and 128-bit
 * integers, sharing no code with the device.  The unit test
 * tests/unit/test-pvdc-compose.c holds the engine to it; the compose qtest
 * holds the device, through its registers, to it.
 *
 * Copyright (c) 2026 The pvdc authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TESTS_QTEST_PVDC_COLOR_REF_H
#define TESTS_QTEST_PVDC_COLOR_REF_H

/*
 * A pipeline: each LUT entry is four 16-bit values, red, green, blue and
 * reserved (struct drm_color_lut, host byte order); the matrix is struct
 * drm_color_ctm.  NULL is a pass-through stage.
 */
typedef struct RefColorDesc {
    const uint16_t *degamma;
    uint32_t degamma_size;
    const uint64_t *ctm;        /* 9 coefficients, S31.32 sign-magnitude */
    const uint16_t *gamma;
    uint32_t gamma_size;
} RefColorDesc;

/* Round a non-negative value to nearest, halves up. */
static inline int ref_color_round(double v)
{
    return (int)(v + 0.5);
}

/*
 * Channel @ch of @lut at the input @v / @max: entries evenly spaced,
 * linear in between.
 */
static inline int ref_color_lut(const uint16_t *lut, uint32_t size, int ch,
                                int v, int max)
{
    double pos = (double)v * (size - 1) / max;
    int i = MIN((int)pos, (int)size - 1);
    double f = pos - i, a = lut[4 * i + ch];
    double b = i + 1 < size ? lut[4 * (i + 1) + ch] : a;

    return ref_color_round(a + (b - a) * f);
}

/* S31.32 sign-magnitude, clamped as the spec says. */
static inline __int128 ref_color_ctm_coefficient(uint64_t v)
{
    __int128 mag = v & ~(1ull << 63);
    __int128 max = (__int128)1 << 45;

    if (v >> 63) {
        return -(mag > max ? max : mag);
    }
    return mag > max - 1 ? max - 1 : mag;
}

/* The 0x00RRGGBB pixel @px after the pipeline @d. */
static inline uint32_t ref_color_pixel(const RefColorDesc *d, uint32_t px)
{
    int in[3], mid[3];
    uint32_t out = 0;

    for (int ch = 0; ch < 3; ch++) {
        int c = (px >> (16 - 8 * ch)) & 0xff;

        in[ch] = d->degamma ?
                 ref_color_lut(d->degamma, d->degamma_size, ch, c, 255) :
                 c * 257;
    }
    for (int i = 0; i < 3; i++) {
        __int128 sum = 0;

        if (!d->ctm) {
            mid[i] = in[i];
            continue;
        }
        for (int j = 0; j < 3; j++) {
            sum += ref_color_ctm_coefficient(d->ctm[3 * i + j]) * in[j];
        }
        /* to nearest, halves up: floor((sum + 2^31) / 2^32) */
        sum += (__int128)1 << 31;
        sum = sum >= 0 ? sum >> 32 : -((-sum + ((1ll << 32) - 1)) >> 32);
        mid[i] = sum < 0 ? 0 : sum > 0xffff ? 0xffff : (int)sum;
    }
    for (int ch = 0; ch < 3; ch++) {
        int v = d->gamma ?
                ref_color_lut(d->gamma, d->gamma_size, ch, mid[ch], 65535) :
                mid[ch];

        out |= (uint32_t)ref_color_round(v * 255.0 / 65535) << (16 - 8 * ch);
    }
    return out;
}

#endif /* TESTS_QTEST_PVDC_COLOR_REF_H */
