/*
 * pvdc: paravirtual display controller - plane composition engine.
 *
 * Turns the active state of one head (background colour, a set of planes
 * reading framebuffers in VRAM or in memory views of their own, a colour
 * pipeline) into an XRGB8888 picture.  The engine knows nothing about
 * registers, commits or the device state: the device copies what it has
 * validated into a PVDCComposeScene and calls pvdc_compose() after a
 * commit is applied or VRAM is written.  docs/specs/pvdc.rst
 * ("Composition") says what the picture is, pixel for pixel;
 * tests/unit/test-pvdc-compose.c holds the engine to it.
 *
 * Zero is today's behaviour for every field added since the first
 * device: no chroma plane, BT.601 limited range, no colour pipeline.
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

/*
 * How YCbCr formats are converted, as the DRM plane properties
 * COLOR_ENCODING and COLOR_RANGE name them (same enumeration values).
 * RGB formats ignore both.
 */
typedef enum PVDCComposeEncoding {
    PVDC_COMPOSE_BT601,
    PVDC_COMPOSE_BT709,
    PVDC_COMPOSE_BT2020,
    PVDC_COMPOSE_ENCODING__MAX,
} PVDCComposeEncoding;

typedef enum PVDCComposeRange {
    PVDC_COMPOSE_RANGE_LIMITED,
    PVDC_COMPOSE_RANGE_FULL,
    PVDC_COMPOSE_RANGE__MAX,
} PVDCComposeRange;

/*
 * What a converter reads, and the converter of a format pixman cannot
 * read; both are the engine's own business (pvdc-compose-internal.h).
 */
typedef struct PVDCComposeReader PVDCComposeReader;
typedef void PVDCComposeConvertFn(const PVDCComposeReader *rd, uint32_t *out,
                                  uint32_t x, uint32_t y, uint32_t width);

/*
 * Writeback into a format pixman does not write exactly: @width pixels of
 * a composed line, host-endian XRGB8888 at @in, stored at @out.
 */
typedef void PVDCComposeStoreFn(const uint32_t *in, uint8_t *out,
                                uint32_t width);

/*
 * A framebuffer format and how the engine reads it.  pixman reads it
 * directly as @color (alpha forced opaque) and @alpha (the same bytes with
 * their alpha, 0 when the format has none); formats without @color are
 * converted by @convert into XRGB8888 strips first, then composited like
 * an RGB plane.  A writeback target is written by pixman as @alpha, or
 * line by line by @store.
 */
typedef struct PVDCComposeFormat {
    uint32_t fourcc;
    unsigned int cpp;           /* bytes per pixel (of the Y plane) */
    unsigned int chroma_cpp;    /* bytes per Cb:Cr sample, two-plane only */
    unsigned int yuv_depth;     /* bits per YCbCr component, 0 for RGB */
    pixman_format_code_t color;
    pixman_format_code_t alpha;
    PVDCComposeConvertFn *convert;
    PVDCComposeStoreFn *store;
} PVDCComposeFormat;

/*
 * Every format the engine reads.  The first PVDC_COMPOSE_NUM_FORMATS are
 * those the device offers, in the order of its FORMAT_TABLE registers:
 * the device has no other list.  Today it offers them all; the two-plane
 * YCbCr formats (PVDC_FMT_NV12, PVDC_FMT_P010: a Y plane at offset/pitch
 * and an interleaved Cb:Cr plane at chroma_offset/chroma_pitch, chroma
 * subsampled 2x2) are the last two.
 */
#define PVDC_COMPOSE_NUM_FORMATS 9
#define PVDC_COMPOSE_ALL_FORMATS 9
extern const PVDCComposeFormat pvdc_compose_formats[PVDC_COMPOSE_ALL_FORMATS];

/* The entry of @fourcc in pvdc_compose_formats, or NULL. */
const PVDCComposeFormat *pvdc_compose_format(uint32_t fourcc);

/*
 * Reads memory of a plane that is not one range of host memory (guest
 * pages scattered in the host): bytes [@offset, @offset + @len) of it.
 * With @copy NULL, a pointer straight to them if they are contiguous in
 * the host, else NULL; otherwise they are copied to @copy, which is
 * returned.  The engine asks for a band of lines at a time, straight if
 * it can, else line by line into a buffer of its own of a few lines.
 */
typedef const uint8_t *PVDCComposeFetchFn(void *opaque, uint64_t offset,
                                          uint64_t len, uint8_t *copy);

/*
 * One enabled plane, in the units of the plane state registers.  The
 * engine re-checks every field against the memory it is given (VRAM or
 * the plane's own views) and leaves the whole scene undrawn if any plane
 * would read outside it.
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
    /* Cb:Cr plane of NV12 and P010, checked like the Y plane; else unused */
    uint64_t chroma_offset;
    uint32_t chroma_pitch;
    uint8_t encoding;       /* PVDCComposeEncoding, YCbCr formats only */
    uint8_t range;          /* PVDCComposeRange, YCbCr formats only */
    /*
     * The memory @offset counts from, @mem_size bytes, and that of
     * @chroma_offset: NULL for the VRAM given to pvdc_compose(), else a
     * view of the plane's own (memory outside VRAM), checked like VRAM.
     */
    const uint8_t *mem;
    uint64_t mem_size;
    const uint8_t *chroma_mem;
    uint64_t chroma_mem_size;
    /*
     * Or, with @mem NULL, memory of @mem_size bytes read through @fetch
     * (@fetch_opaque), and likewise @chroma_fetch for the Cb:Cr plane:
     * the engine reads only the lines it composes, and copies none where
     * they are contiguous in the host.
     */
    PVDCComposeFetchFn *fetch;
    void *fetch_opaque;
    PVDCComposeFetchFn *chroma_fetch;
    void *chroma_fetch_opaque;
} PVDCComposePlane;

/* A head's colour pipeline, derived once by pvdc_compose_color_new(). */
typedef struct PVDCComposeColor PVDCComposeColor;

typedef struct PVDCComposeScene {
    uint32_t width;         /* head size, pixels */
    uint32_t height;
    uint32_t background;    /* XRGB8888, shown where no plane covers */
    unsigned int num_planes;
    PVDCComposePlane planes[PVDC_MAX_PLANES_PER_HEAD];
    /*
     * Applied to the blended picture, background included; NULL for none.
     * The scene only points to it: whoever replaces or frees it must
     * compose the head again.
     */
    const PVDCComposeColor *color;
} PVDCComposeScene;

/*
 * One entry of a DEGAMMA or GAMMA lookup table, laid out like struct
 * drm_color_lut (host byte order): 0 is 0.0 and 0xffff is 1.0.
 */
typedef struct PVDCComposeLutEntry {
    uint16_t red;
    uint16_t green;
    uint16_t blue;
    uint16_t reserved;
} PVDCComposeLutEntry;

/*
 * A head's colour pipeline as the DRM CRTC properties give it, applied in
 * this order to every pixel after blending.  A NULL table or matrix is a
 * pass-through stage.  The engine copies what it needs: the caller keeps
 * ownership of the arrays.
 */
typedef struct PVDCComposeColorDesc {
    /* entries evenly spaced over the input range 0.0..1.0 */
    const PVDCComposeLutEntry *degamma;
    uint32_t degamma_size;  /* PVDC_LUT_MIN_SIZE..PVDC_LUT_MAX_SIZE */
    /* struct drm_color_ctm: S31.32 sign-magnitude, out = ctm x in */
    const uint64_t *ctm;    /* 9 coefficients, row-major */
    const PVDCComposeLutEntry *gamma;
    uint32_t gamma_size;
} PVDCComposeColorDesc;

/* Where a head scanned out straight from VRAM finds its pixels. */
typedef struct PVDCComposeDirect {
    pixman_format_code_t format;
    uint64_t offset;        /* head pixel (0, 0) in VRAM, bytes */
    uint32_t stride;        /* bytes per line */
} PVDCComposeDirect;

/*
 * Compose @scene into @dst, a PIXMAN_x8r8g8b8 image of the head size.
 * Only the pixels inside @damage (head coordinates, NULL for the whole
 * head) are written.  Planes without views of their own read @vram.
 * Returns false, leaving @dst untouched, if @dst does not fit the scene
 * or a plane fails the checks against its memory.
 */
bool pvdc_compose(const PVDCComposeScene *scene, const uint8_t *vram,
                  uint64_t vram_size, pixman_image_t *dst,
                  const QemuRect *damage);

/*
 * If @scene shows exactly one framebuffer unchanged (one opaque, unscaled,
 * untransformed plane at an integer source offset covering the whole head,
 * nothing else visible, in a format with a pixman equivalent, in VRAM:
 * no view or fetch of its own), fill @direct and return true: the head can then
 * be displayed from VRAM with no copy.  The caller must still ask the
 * console whether it can show @direct->format (dpy_gfx_check_format()).
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

/* Lines of bytes in VRAM: @rows of @row_bytes, @pitch apart. */
typedef struct PVDCComposeSpan {
    uint64_t offset;        /* the first line */
    uint64_t row_bytes;
    uint32_t rows;
    uint32_t pitch;
} PVDCComposeSpan;

/*
 * The framebuffer bytes @plane may sample, one span per memory plane:
 * @span[0] the source rectangle rounded out to whole pixels (and to
 * whole 32-bit words for 2-byte pixels), @span[1] for NV12 and P010 the
 * chroma samples those pixels may take.  Returns the number of spans, 0
 * for an invalid plane.  Checking the plane once for both matters: dirty
 * tracking asks it of every plane at every refresh.
 */
unsigned int pvdc_compose_plane_sources(const PVDCComposePlane *plane,
                                        PVDCComposeSpan span[2]);

/* Grow @acc to the bounding box of @acc and @rect; empty rects vanish. */
void pvdc_compose_rect_union(QemuRect *acc, const QemuRect *rect);

/*
 * The VRAM bytes the framebuffer of @plane occupies, from its first
 * pixel to the last of its last line, one range [@start[i], @end[i]) per
 * memory plane (two for NV12 and P010).  Returns the number of ranges, 0
 * if the plane is invalid.  A VRAM write outside them never changes what
 * the plane shows; pvdc_compose_plane_damage() says what a write inside
 * them changes.
 */
unsigned int pvdc_compose_plane_vram(const PVDCComposePlane *plane,
                                     uint64_t start[2], uint64_t end[2]);

/*
 * Derive the tables of a colour pipeline.  Returns NULL if a LUT size is
 * out of range.  The expensive tables (about as long as composing a
 * 1920x1080 frame once) are derived at the first composition that applies
 * the pipeline and kept: the device should create it when the pipeline
 * changes, not for every composition.
 */
PVDCComposeColor *pvdc_compose_color_new(const PVDCComposeColorDesc *desc);
void pvdc_compose_color_free(PVDCComposeColor *color);

/* Whether @color changes any pixel value at all (NULL does not). */
bool pvdc_compose_color_active(const PVDCComposeColor *color);

/*
 * The LUT evaluations spent so far deriving the tables of @color that are
 * derived at its first use (0 for NULL): what a composition that applied
 * it first cost besides its pixels.
 */
uint64_t pvdc_compose_color_evaluations(const PVDCComposeColor *color);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(PVDCComposeColor, pvdc_compose_color_free)

#endif /* HW_DISPLAY_PVDC_COMPOSE_H */
