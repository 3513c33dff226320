/*
 * The pvdc compose qtest library (pvdc-qtest-compose.c), linked into the
 * qtests that compare what a head shows with what it should show: scenes
 * of planes written into VRAM and committed through the registers, and the
 * reference composer, written from the composition rules of
 * docs/specs/pvdc.rst (pixman's 8-bit arithmetic) one pixel at a time,
 * which draws the picture the device's CRCs, screendumps and writebacks
 * are compared with.  Its names start with pvdc_ (PVDC for types).
 *
 * Every machine has two heads of OVERLAYS overlays; the mode is 64x48 at
 * one frame per millisecond.  Framebuffer k lives at FB_BASE(k) in VRAM,
 * and the test keeps a copy of what it wrote there (the shadow), which
 * the reference reads.
 *
 * Copyright (c) 2026 The pvdc authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TESTS_QTEST_PVDC_QTEST_COMPOSE_H
#define TESTS_QTEST_PVDC_QTEST_COMPOSE_H

#include "pvdc-qtest.h"
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

typedef struct PVDCPlane {
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
} PVDCPlane;

/*
 * A colour pipeline: the stages HS_CTRL enables, and their tables (struct
 * drm_color_lut entries, host order) and matrix, written at COLOR_*.
 */
typedef struct PVDCColor {
    uint32_t stages;            /* PVDC_HS_CTRL_DEGAMMA, _CTM, _GAMMA */
    uint32_t degamma_size, gamma_size;
    uint16_t degamma[4 * PVDC_LUT_MAX_SIZE];
    uint16_t gamma[4 * PVDC_LUT_MAX_SIZE];
    uint64_t ctm[9];
} PVDCColor;

/* Where pvdc_commit_scene() puts the tables and the matrix, past the fbs. */
#define COLOR_DEGAMMA       (4 * MiB)
#define COLOR_CTM           (COLOR_DEGAMMA + PVDC_LUT_MAX_SIZE * 8)
#define COLOR_GAMMA         (COLOR_CTM + PVDC_CTM_SIZE + 8)

/*
 * A writeback target at WB_BASE: @format, @pitch bytes a line, the whole
 * test mode.  The test checks WB_GUARD bytes either side are untouched.
 */
typedef struct PVDCWriteback {
    uint32_t format;
    uint32_t pitch;
} PVDCWriteback;

#define WB_BASE             (8 * MiB)
#define WB_GUARD            (4 * KiB)
#define WB_MAX_PITCH        (2 * MODE_PITCH)
#define WB_SPAN             (2 * WB_GUARD + WB_MAX_PITCH * MODE_H)
#define WB_SENTINEL         0xa5

typedef struct PVDCScene {
    uint32_t background;
    unsigned int num_planes;
    PVDCPlane planes[SLOTS];
    const PVDCColor *color;     /* NULL: no pipeline */
    const PVDCWriteback *wb;    /* NULL: no writeback */
} PVDCScene;

typedef struct PVDCCompose {
    PVDCTest p;
    uint8_t *shadow;            /* what the test wrote into VRAM */
    bool head_on[2];
} PVDCCompose;

/* The formats a writeback writes: 32-bit RGB, and their names. */
#define PVDC_WB_FORMATS     5
extern const uint32_t pvdc_wb_formats[PVDC_WB_FORMATS];
extern const char *const pvdc_wb_format_names[PVDC_WB_FORMATS];

/* The plane index of slot @slot (PRIMARY, OVERLAY(i), CURSOR) of @head. */
unsigned int pvdc_slot_index(unsigned int head, unsigned int slot);

/* Every machine: two heads of OVERLAYS overlays, scalers to spare. */
char *pvdc_compose_props(const char *props);

/*
 * Start the compose machine (pvdc_compose_props() with @props, @extra on
 * the command line) with an empty shadow of VRAM; with @crc, CRC capture
 * is on for both heads.
 */
void pvdc_compose_start_with(PVDCCompose *t, const char *props,
                             const char *extra, bool crc);

/* pvdc_compose_start_with() and nothing more on the command line. */
void pvdc_compose_start(PVDCCompose *t, const char *props, bool crc);

/* Free the shadow of VRAM and quit the machine. */
void pvdc_compose_stop(PVDCCompose *t);

/* Write @len bytes of @buf into VRAM at @offset, and into the shadow. */
void pvdc_vram_write(PVDCCompose *t, uint32_t offset, const void *buf,
                     size_t len);

/* How often the device composed @head (x-headN-compositions). */
uint64_t pvdc_compositions(PVDCCompose *t, unsigned int head);

/* The shadow registers of @p on @head, enabled. */
void pvdc_write_scene_plane(PVDCCompose *t, unsigned int head,
                            const PVDCPlane *p);

/* A LUT of @size entries into VRAM at @offset, little-endian. */
void pvdc_write_lut(PVDCCompose *t, uint32_t offset, const uint16_t *lut,
                    uint32_t size);

/* The tables and matrix of @c into VRAM, and the head's colour registers. */
void pvdc_write_color(PVDCCompose *t, unsigned int head, const PVDCColor *c);

/*
 * Commit @scene on @head (64x48, enabled) and return the outcome once the
 * device has one: at once for a head being enabled, else at its next
 * vblank.
 */
uint32_t pvdc_try_commit_scene(PVDCCompose *t, unsigned int head,
                               const PVDCScene *scene);

/* Make @scene the active state of @head (pvdc_try_commit_scene()). */
void pvdc_commit_scene(PVDCCompose *t, unsigned int head,
                       const PVDCScene *scene);

/* The CRC of the frame that starts at the next vblank of @head. */
uint32_t pvdc_next_frame_crc(PVDCCompose *t, unsigned int head);

/* Bytes per pixel of the (Y) plane. */
uint32_t pvdc_format_cpp(uint32_t format);

/* Bytes per Cb:Cr sample of the two-plane formats, else 0. */
uint32_t pvdc_chroma_bps(uint32_t format);

/* Whether @format is a YCbCr one. */
bool pvdc_is_ycbcr(uint32_t format);

/* A pattern value for pixel (@x, @y) of pattern @seed: a hash. */
uint32_t pvdc_noise(uint32_t seed, uint32_t x, uint32_t y);

/*
 * Fill @h lines of @w units of @cpp bytes, @pitch bytes apart, at VRAM
 * @offset with pattern @seed.
 */
void pvdc_fill_lines(PVDCCompose *t, uint32_t offset, uint32_t pitch,
                     uint32_t cpp, uint32_t w, uint32_t h, uint32_t seed);

/*
 * Fill framebuffer @fb (@w x @h in @format) with pattern @seed, and the
 * Cb:Cr plane of two-plane formats (its pitch in @chroma_pitch).  Returns
 * the pitch.
 */
uint32_t pvdc_fill_fb_aligned(PVDCCompose *t, unsigned int fb, uint32_t format,
                              uint32_t w, uint32_t h, uint32_t seed,
                              uint32_t align, uint32_t *chroma_pitch);

/*
 * As pvdc_fill_fb_aligned(), lines 64-byte aligned like a guest's dumb
 * buffers.
 */
uint32_t pvdc_fill_fb(PVDCCompose *t, unsigned int fb, uint32_t format,
                      uint32_t w, uint32_t h, uint32_t seed,
                      uint32_t *chroma_pitch);

/* A smooth pattern, for filtering: neighbours differ by at most 16. */
uint32_t pvdc_fill_gradient(PVDCCompose *t, unsigned int fb, uint32_t w,
                            uint32_t h);

/* A plane showing all of framebuffer @fb unscaled at (@x, @y). */
PVDCPlane pvdc_scene_plane(PVDCCompose *t, unsigned int slot, uint32_t format,
                           unsigned int fb, uint32_t w, uint32_t h, int x,
                           int y, uint32_t zpos);

/* The 8-bit channel at bit @shift of @v. */
uint32_t pvdc_chan(uint32_t v, int shift);

/* @v clamped to 0..255. */
uint32_t pvdc_clamp8(int64_t v);

/* Pixel (@x, @y) of the framebuffer of @p: colour, and alpha in @alpha. */
uint32_t pvdc_ref_fetch(PVDCCompose *t, const PVDCPlane *p, uint32_t x,
                        uint32_t y, uint32_t *alpha);

/*
 * The framebuffer pixel, along one axis, that destination pixel @d of a
 * plane samples with nearest filtering: the source rectangle mapped onto
 * the destination with the scale rounded to 16.16, sampled at the pixel
 * centre, exact halves rounding down, clamped to the source rectangle
 * rounded out to whole pixels (@lo, @hi).
 */
uint32_t pvdc_ref_sample(uint32_t src, uint32_t src_size, uint32_t dst_size,
                         bool flip, int64_t d, int64_t lo, int64_t hi);

/* Draw @scene into @out (MODE_W x MODE_H, 0x00RRGGBB). */
void pvdc_reference(PVDCCompose *t, const PVDCScene *scene, uint32_t *out);

/*
 * Show @scene on head 0 and check the CRC of its next frame against the
 * reference; on a mismatch, find the first wrong pixel in a screendump.
 */
void pvdc_check_scene(PVDCCompose *t, const PVDCScene *scene);

/* Add @p to @scene. */
void pvdc_scene_add(PVDCScene *scene, PVDCPlane p);

/* Console @head shows @scene as the reference draws it, exactly. */
void pvdc_assert_screen_is(PVDCCompose *t, unsigned int head,
                           const PVDCScene *scene);

/* Head 0's picture: a full-screen primary and an overlay over it. */
void pvdc_build_two_planes(PVDCCompose *t, PVDCScene *scene);

/* Console @connector shows what no head drives: a black picture. */
void pvdc_assert_screen_blank(PVDCCompose *t, unsigned int connector);

/*
 * A full-screen XRGB8888 primary of framebuffer 0 in @scene, committed on
 * head 0: it is on the screen.
 */
void pvdc_show_one_framebuffer(PVDCCompose *t, PVDCScene *scene);

/* Enable @head showing @scene on @connector. */
void pvdc_commit_routed(PVDCCompose *t, unsigned int head, uint32_t connector,
                        const PVDCScene *scene);

/* Head 1's picture: another background and other framebuffers. */
void pvdc_build_other_two_planes(PVDCCompose *t, PVDCScene *scene);

/* 2 entries, from white to black: every channel c becomes 255 - c. */
void pvdc_lut_invert(uint16_t *lut);

/* The target and WB_GUARD bytes either side filled with WB_SENTINEL. */
void pvdc_wb_clear(PVDCCompose *t);

/*
 * Bytes [@from, @to) of a writeback target span (pvdc_wb_read()) still
 * hold WB_SENTINEL.
 */
bool pvdc_wb_untouched(const uint8_t *span, size_t from, size_t to);

/*
 * What was written to the target @wb as 0x00RRGGBB pixels, checking the
 * top byte (bits) are opaque and every byte outside the pixels (padding,
 * guards) is untouched.
 */
uint32_t *pvdc_wb_read(PVDCCompose *t, const PVDCWriteback *wb);

/*
 * The pixels written at the latch are the frame the head then shows: its
 * screendump, the reference and its CRC (read in the frame the commit
 * started).
 */
void pvdc_assert_wb_is_the_frame(PVDCCompose *t, const PVDCScene *scene);

/* A cursor with random alpha over an overlay over the primary. */
void pvdc_build_cursor(PVDCCompose *t, PVDCScene *scene);

#endif /* TESTS_QTEST_PVDC_QTEST_COMPOSE_H */
