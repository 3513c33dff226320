/*
 * pvdc: paravirtual display controller - plane composition engine.
 *
 * Turns the active state of one head (background colour and a set of
 * planes reading framebuffers in VRAM) into an XRGB8888 picture.  The
 * engine knows nothing about registers, commits or the device state: the
 * device copies what it has validated into a PVDCComposeScene and calls
 * pvdc_compose() after a commit is applied or VRAM is written.
 *
 * Copyright (c) 2026 The pvdc authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef HW_DISPLAY_PVDC_COMPOSE_H
#define HW_DISPLAY_PVDC_COMPOSE_H

#include "ui/qemu-pixman.h"
#include "ui/rect.h"
#include "hw/display/pvdc-regs.h"

/* Largest head, framebuffer or destination side the engine accepts. */
#define PVDC_COMPOSE_MAX_SIZE   16384

/* Convert @width pixels of @line from pixel @x on to host XRGB8888. */
typedef void PVDCComposeConvertFn(uint32_t *out, const uint8_t *line,
                                  uint32_t x, uint32_t width);

/*
 * A framebuffer format and how the engine reads it: @color gives the
 * colour channels with alpha forced opaque, @alpha (0 when the format has
 * none) the same bytes with their alpha; formats with @convert are
 * converted to XRGB8888 first.
 */
typedef struct PVDCComposeFormat {
    uint32_t fourcc;
    unsigned int cpp;           /* bytes per pixel */
    pixman_format_code_t color;
    pixman_format_code_t alpha;
    PVDCComposeConvertFn *convert;
} PVDCComposeFormat;

/*
 * Every format the engine reads, in the order of the device's
 * FORMAT_TABLE registers: the device has no other list.
 */
#define PVDC_COMPOSE_NUM_FORMATS 7
extern const PVDCComposeFormat pvdc_compose_formats[PVDC_COMPOSE_NUM_FORMATS];

/* The entry of @fourcc in pvdc_compose_formats, or NULL. */
const PVDCComposeFormat *pvdc_compose_format(uint32_t fourcc);

/*
 * One enabled plane, in the units of the plane state registers.  The
 * engine re-checks every field against the VRAM it is given and leaves
 * the whole scene undrawn if any plane would read outside it.
 */
typedef struct PVDCComposePlane {
    uint32_t format;        /* PVDC_FMT_* fourcc */
    uint64_t offset;        /* framebuffer start in VRAM, bytes */
    uint32_t pitch;         /* bytes per framebuffer line */
    uint32_t fb_width;      /* framebuffer size, pixels */
    uint32_t fb_height;
    uint32_t src_x;         /* source rectangle in the framebuffer, 16.16 */
    uint32_t src_y;
    uint32_t src_w;
    uint32_t src_h;
    int32_t dst_x;          /* destination on the head, may be off-screen */
    int32_t dst_y;
    uint32_t dst_w;
    uint32_t dst_h;
    uint32_t zpos;          /* 0 = bottom; ties are drawn in array order */
    uint16_t alpha;         /* plane alpha, 0xffff = opaque */
    uint32_t ctrl;          /* PVDC_PS_CTRL as latched; ENABLE is ignored */
} PVDCComposePlane;

typedef struct PVDCComposeScene {
    uint32_t width;         /* head size, pixels */
    uint32_t height;
    uint32_t background;    /* XRGB8888, shown where no plane covers */
    unsigned int num_planes;
    PVDCComposePlane planes[PVDC_MAX_PLANES_PER_HEAD];
} PVDCComposeScene;

/* Where a head scanned out straight from VRAM finds its pixels. */
typedef struct PVDCComposeDirect {
    pixman_format_code_t format;
    uint64_t offset;        /* head pixel (0, 0) in VRAM, bytes */
    uint32_t stride;        /* bytes per line */
} PVDCComposeDirect;

/*
 * Compose @scene into @dst, a PIXMAN_x8r8g8b8 image of the head size.
 * Only the pixels inside @damage (head coordinates, NULL for the whole
 * head) are written.  Returns false, leaving @dst untouched, if @dst does
 * not fit the scene or a plane fails the checks against @vram_size.
 */
bool pvdc_compose(const PVDCComposeScene *scene, const uint8_t *vram,
                  uint64_t vram_size, pixman_image_t *dst,
                  const QemuRect *damage);

/*
 * If @scene shows exactly one framebuffer unchanged (one opaque, unscaled,
 * untransformed plane at an integer source offset covering the whole head,
 * nothing else visible, in a format with a pixman equivalent), fill
 * @direct and return true: the head can then be displayed from VRAM with
 * no copy.  The caller must still ask the console whether it can show
 * @direct->format (dpy_gfx_check_format()).
 */
bool pvdc_compose_direct(const PVDCComposeScene *scene, uint64_t vram_size,
                         PVDCComposeDirect *direct);

/*
 * CRC-32 of a frame, as reported in PVDC_HEAD_CRC_VALUE: the IEEE 802.3
 * polynomial exactly as zlib's crc32(), over the rows top to bottom, each
 * row being width pixels written as little-endian 32-bit words 0x00RRGGBB
 * (the X byte counts as zero), without row padding.  @img may be in any
 * pixman format; it is converted to XRGB8888 row by row first.
 */
uint32_t pvdc_compose_crc32(pixman_image_t *img);

/*
 * The part of a head of @width x @height that @plane covers.  Returns false
 * (and an empty @rect) when the plane is entirely off-screen.
 */
bool pvdc_compose_plane_rect(const PVDCComposePlane *plane, uint32_t width,
                             uint32_t height, QemuRect *rect);

/*
 * The part of a head of @width x @height that may change when the VRAM
 * bytes [@start, @start + @len) are written, as far as @plane is concerned
 * (a conservative bounding rectangle, widened for filtering).  Returns
 * false (and an empty @rect) when the write does not affect the plane.
 */
bool pvdc_compose_plane_damage(const PVDCComposePlane *plane, uint32_t width,
                               uint32_t height, uint64_t start, uint64_t len,
                               QemuRect *rect);

/*
 * The framebuffer bytes @plane may sample: @rows lines of @row_bytes
 * bytes, the first at @offset, one pitch apart (the source rectangle
 * rounded out to whole pixels).  Returns false for an invalid plane.
 */
bool pvdc_compose_plane_source(const PVDCComposePlane *plane,
                               uint64_t *offset, uint64_t *row_bytes,
                               uint32_t *rows);

/* Grow @acc to the bounding box of @acc and @rect; empty rects vanish. */
void pvdc_compose_rect_union(QemuRect *acc, const QemuRect *rect);

#endif /* HW_DISPLAY_PVDC_COMPOSE_H */
