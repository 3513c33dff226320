/*
 * pvdc: paravirtual display controller - composition engine internals.
 *
 * Shared by the three parts of the engine: pvdc-compose.c (geometry,
 * blending, damage), pvdc-compose-convert.c (framebuffer formats pixman
 * cannot read, YCbCr above all) and pvdc-compose-color.c (the colour
 * pipeline of a head).  Nothing outside the engine includes it.
 *
 * Copyright (c) 2026 The pvdc authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef HW_DISPLAY_PVDC_COMPOSE_INTERNAL_H
#define HW_DISPLAY_PVDC_COMPOSE_INTERNAL_H

#include "pvdc-compose.h"

/*
 * x86-64 hosts convert YCbCr 8 pixels at a time and filter upscaled
 * planes with SSE2, part of their baseline: the same arithmetic as the
 * portable code and pixman, in fewer instructions.  Defining
 * PVDC_COMPOSE_SCALAR leaves it out (bench/Makefile checks both).
 */
#if defined(HOST_X86_64) && !defined(PVDC_COMPOSE_SCALAR)
#define PVDC_COMPOSE_SSE2 1
#include <emmintrin.h>
#endif

/*
 * YCbCr to R'G'B' in fixed point, for one encoding, range and component
 * depth; see pvdc-compose-convert.c for the derivation.  Chroma comes in
 * eighths (the chroma upsampler interpolates with weights in 1/8), so
 *
 *   L = y * 8 * (Y - y_off) + 2^18,  U = 8 * Cb - 8 * c_off,  V likewise
 *   R = (L + r_v * V) >> 19
 *   G = (L - g_u * U - g_v * V) >> 19
 *   B = (L + b_u * U) >> 19
 *
 * each clamped to 0..255.  Every term stays below 2^28 in magnitude.
 */
typedef struct PVDCComposeYuv {
    int32_t y_off;
    int32_t c_off;
    int32_t y;
    int32_t r_v;
    int32_t g_u;
    int32_t g_v;
    int32_t b_u;
    /*
     * How far Y - y_off and chroma in eighths can be shifted left within
     * 16 bits, for the SSE2 converters
     */
    int32_t s_y;
    int32_t s_c;
    /* L for every Y, biased for pvdc-compose-convert.c's clamp table */
    const int32_t *luma;
} PVDCComposeYuv;

/*
 * What a line converter reads: one plane's framebuffer(s), line y at @mem
 * + @pitch * (y - @line0) and chroma line j at @chroma + @chroma_pitch *
 * (j - @chroma_line0), pixel x at byte x * cpp of its line.  The whole
 * framebuffer (line0 0, the plane's pitch) in VRAM or the plane's views;
 * the lines of a band, fetched (PVDCComposePlane.fetch), otherwise.
 */
struct PVDCComposeReader {
    const uint8_t *mem;
    uint32_t pitch;
    uint32_t line0;
    const uint8_t *chroma;
    uint32_t chroma_pitch;
    uint32_t chroma_line0;
    const PVDCComposeYuv *yuv;      /* YCbCr formats only */
    /*
     * The chroma samples of the pixels the plane may show (its source
     * rectangle rounded out to whole pixels), [cx0, cx1) x [cy0, cy1):
     * the chroma upsampler repeats the edge samples rather than reading
     * beyond them.  Two-plane formats only.
     */
    uint32_t cx0, cx1, cy0, cy1;
};

/* Framebuffer line @y of what @rd reads, and Cb:Cr line @row. */
static inline const uint8_t *pvdc_compose_line(const PVDCComposeReader *rd,
                                               uint32_t y)
{
    return rd->mem + (uint64_t)rd->pitch * (y - rd->line0);
}

static inline const uint8_t *
pvdc_compose_chroma_line(const PVDCComposeReader *rd, uint32_t row)
{
    return rd->chroma + (uint64_t)rd->chroma_pitch * (row - rd->chroma_line0);
}

/*
 * PVDCComposeConvertFn: convert @width pixels of framebuffer line @y,
 * from framebuffer column @x on, into host-endian XRGB8888 at @out.  The
 * caller has checked that every byte the pixels and their chroma need
 * lies inside VRAM.
 */
PVDCComposeConvertFn pvdc_compose_convert_rgb565;
PVDCComposeConvertFn pvdc_compose_convert_xrgb2101010;
PVDCComposeConvertFn pvdc_compose_convert_yuyv;
PVDCComposeConvertFn pvdc_compose_convert_nv12;
PVDCComposeConvertFn pvdc_compose_convert_p010;

/* PVDCComposeStoreFn of the writeback formats pixman does not write */
PVDCComposeStoreFn pvdc_compose_store_xrgb2101010;

/* The coefficients for @encoding and @range at @depth (8 or 10) bits. */
const PVDCComposeYuv *pvdc_compose_yuv(PVDCComposeEncoding encoding,
                                       PVDCComposeRange range,
                                       unsigned int depth);

/* Run the pixels [x, x + w) x [y, y + h) of @dst through @color. */
void pvdc_compose_color_apply(const PVDCComposeColor *color,
                              pixman_image_t *dst, int32_t x, int32_t y,
                              int32_t w, int32_t h);

#endif /* HW_DISPLAY_PVDC_COMPOSE_INTERNAL_H */
