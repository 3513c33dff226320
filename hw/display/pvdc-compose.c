/*
 * pvdc: paravirtual display controller - plane composition engine.
 *
 * Planes are drawn bottom to top (zpos order) over the background with
 * pixman, straight from images that wrap the framebuffers in VRAM: no
 * plane is copied unless its format needs converting
 * (pvdc-compose-convert.c) or its blend mode a premultiplied version of
 * it, and then a few lines at a time.  Only the visible part of each
 * plane inside the damaged rectangle is composited, planes hidden
 * under an opaque plane covering that rectangle are not drawn at all,
 * and of a plane partly hidden the part under the opaque plane above it
 * that hides most is not drawn either.  The head's colour pipeline
 * (pvdc-compose-color.c) then runs over the same rectangle.
 *
 * A plane whose memory is fetched (guest pages scattered in the host)
 * is drawn a band of source lines at a time, each band straight from
 * the memory where its lines are contiguous in the host, else copied
 * line by line (only the columns the plane samples) into a buffer of a
 * few hundred KiB that stays in the cache; an opaque unscaled plane in
 * the frame's format copies its lines straight into the frame.  The
 * picture is the same as from VRAM.
 *
 * Blending follows the DRM "pixel blend mode" property (drm_blend.c), with
 * fg the plane pixel, bg what is below and pa the plane alpha:
 *
 *   None            out = pa * fg.rgb + (1 - pa) * bg
 *   Pre-multiplied  out = pa * fg.rgb + (1 - pa * fg.a) * bg
 *   Coverage        out = pa * fg.a * fg.rgb + (1 - pa * fg.a) * bg
 *
 * pixman's OVER with a solid mask pa computes the first two directly (fg
 * read without or with its alpha).  Coverage with pa opaque is OVER of the
 * colour channels through the pixel alpha as a mask; with pa translucent
 * the plane is premultiplied into a strip of a few lines first, so the
 * temporary stays small whatever the head size.  (With bilinear
 * filtering, coverage planes thus have colour and alpha interpolated
 * separately rather than premultiplied; the difference is confined to
 * edges where both change.)  Every product is pixman's 8-bit one, x * y
 * / 255 rounded to nearest, and sums saturate; plane alpha is rounded
 * from its 16 bits to 8 first.
 *
 * Geometry: the source rectangle (16.16) is mapped onto the destination
 * rectangle by a pixman affine transform that also carries the 180 degree
 * rotation and the reflections; planes that need none of it are plain
 * copies, pixman's fastest path.  The scale factor src / dst is rounded to
 * 16.16 (never to 0), which moves the sample of destination pixel d by at
 * most (d + 1/2) / 2^17 source pixels, 1/8 of a pixel at the largest
 * destination: within what drm_blend.c allows ("round the subpixel
 * sampling positions ... only to the next full pixel").  The cost of a
 * plane is that of its destination whatever the ratio, up or down.
 * Samples never leave the source rectangle rounded out to whole pixels
 * (pad repeat), so bilinear filtering clamps at its edges instead of
 * fading to transparent or reading a neighbour.  Where pixman would need
 * an image starting at an odd 2-byte pixel (RGB565), the plane is
 * converted instead, so that this holds there too.
 *
 * Copyright (c) 2026 The pvdc authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include <zlib.h>
#include "qemu/bitops.h"
#include "qemu/bswap.h"
#include "pvdc-compose-internal.h"
#include "pvdc-fields.h"

/* Lines premultiplied at a time for translucent coverage-blended planes. */
#define PVDC_COMPOSE_STRIP_LINES 32
/* Destination lines converted at a time when a plane is not a plain copy. */
#define PVDC_COMPOSE_CONVERT_LINES 64
/*
 * Source lines fetched at a time for a plane whose memory is fetched: a
 * band that stays in the cache while it is composed.
 */
#define PVDC_COMPOSE_FETCH_LINES 64

/*
 * pixman formats are host-endian, framebuffers little-endian: the 8888
 * formats have byte-swapped pixman equivalents, RGB565 has not, so a
 * big-endian host converts RGB565 planes.
 */
#if HOST_BIG_ENDIAN
#define PVDC_LE_r5g6b5          0
#else
#define PVDC_LE_r5g6b5          PIXMAN_r5g6b5
#endif

/*
 * The register interface shows the first PVDC_COMPOSE_NUM_FORMATS entries
 * (FORMAT_TABLE), in this order.
 */
const PVDCComposeFormat pvdc_compose_formats[] = {
    { .fourcc = PVDC_FMT_XRGB8888, .cpp = 4, .color = PIXMAN_LE_x8r8g8b8 },
    { .fourcc = PVDC_FMT_ARGB8888, .cpp = 4, .color = PIXMAN_LE_x8r8g8b8,
      .alpha = PIXMAN_LE_a8r8g8b8 },
    { .fourcc = PVDC_FMT_XBGR8888, .cpp = 4, .color = PIXMAN_LE_x8b8g8r8 },
    { .fourcc = PVDC_FMT_ABGR8888, .cpp = 4, .color = PIXMAN_LE_x8b8g8r8,
      .alpha = PIXMAN_LE_a8b8g8r8 },
    { .fourcc = PVDC_FMT_RGB565, .cpp = 2, .color = PVDC_LE_r5g6b5,
      .convert = pvdc_compose_convert_rgb565 },
    { .fourcc = PVDC_FMT_XRGB2101010, .cpp = 4,
      .convert = pvdc_compose_convert_xrgb2101010,
      .store = pvdc_compose_store_xrgb2101010 },
    { .fourcc = PVDC_FMT_YUYV, .cpp = 2, .yuv_depth = 8,
      .convert = pvdc_compose_convert_yuyv },
    { .fourcc = PVDC_FMT_NV12, .cpp = 1, .chroma_cpp = 2, .yuv_depth = 8,
      .convert = pvdc_compose_convert_nv12 },
    { .fourcc = PVDC_FMT_P010, .cpp = 2, .chroma_cpp = 4, .yuv_depth = 10,
      .convert = pvdc_compose_convert_p010 },
};
QEMU_BUILD_BUG_ON(ARRAY_SIZE(pvdc_compose_formats) !=
                  PVDC_COMPOSE_ALL_FORMATS);

/* One plane, checked and reduced to what pixman needs. */
typedef struct PVDCComposeJob {
    const PVDCComposePlane *plane;
    const PVDCComposeFormat *fmt;
    /* converts the framebuffer, or NULL if pixman reads it */
    PVDCComposeConvertFn *convert;
    /* what @convert needs; its memory is what pixman reads too */
    PVDCComposeReader reader;
    /*
     * The image lines [band_y, band_y + band_h) (from img_y) @reader
     * holds: all of them, or the band fetched last.
     */
    uint32_t band_y, band_h;
    unsigned int blend;         /* PVDC_BLEND_* */
    bool pixel_alpha;           /* blending uses the pixels' alpha */
    uint8_t alpha;              /* plane alpha as pixman applies it */
    bool visible;
    bool opaque;                /* hides whatever is below it */
    /* visible part on the head: [x0, x1) x [y0, y1) */
    int32_t x0, y0, x1, y1;
    /*
     * The framebuffer pixels the plane may sample (its source rectangle
     * rounded out), [img_x, img_x + img_w) x [img_y, img_y + img_h): the
     * image a transform maps to.
     */
    uint32_t img_x, img_y, img_w, img_h;
    /* the columns [read_x0, read_x1) of those lines reading them touches */
    uint32_t read_x0, read_x1;
    /*
     * What pixman reads if it reads the framebuffer: from column pix_x
     * (img_x, rounded down to a 32-bit boundary for 2-byte pixels when
     * the plane is not transformed).
     */
    uint32_t pix_x;
    bool transformed;
    pixman_transform_t transform;
    pixman_filter_t filter;
    /* without transform: framebuffer pixel = head pixel + (dx, dy) */
    int32_t dx, dy;
} PVDCComposeJob;

const PVDCComposeFormat *pvdc_compose_format(uint32_t fourcc)
{
    for (size_t i = 0; i < ARRAY_SIZE(pvdc_compose_formats); i++) {
        if (pvdc_compose_formats[i].fourcc == fourcc) {
            return &pvdc_compose_formats[i];
        }
    }
    return NULL;
}

static bool pvdc_compose_size_ok(uint32_t size)
{
    return size > 0 && size <= PVDC_COMPOSE_MAX_SIZE;
}

static bool pvdc_compose_pos_ok(int32_t pos)
{
    return pos >= -PVDC_COMPOSE_MAX_SIZE && pos <= PVDC_COMPOSE_MAX_SIZE;
}

static uint8_t pvdc_compose_alpha8(uint16_t alpha)
{
    return ((uint32_t)alpha * 255 + 32767) / 65535;
}

/* Whether [offset, offset + len) lies inside @vram_size bytes. */
static bool pvdc_compose_in_vram(uint64_t offset, uint64_t len,
                                 uint64_t vram_size)
{
    return offset <= vram_size && len <= vram_size - offset;
}

/* Checks of the framebuffer layout alone, whatever the plane shows. */
static bool pvdc_compose_fb_ok(const PVDCComposePlane *plane,
                               const PVDCComposeFormat *fmt)
{
    if (!fmt || !pvdc_compose_size_ok(plane->fb_width) ||
        !pvdc_compose_size_ok(plane->fb_height) ||
        (plane->format == PVDC_FMT_YUYV && plane->fb_width % 2) ||
        plane->pitch % 4 || plane->offset % 4 ||
        plane->pitch < plane->fb_width * fmt->cpp) {
        return false;
    }
    if (fmt->yuv_depth && (plane->encoding >= PVDC_COMPOSE_ENCODING__MAX ||
                           plane->range >= PVDC_COMPOSE_RANGE__MAX)) {
        return false;
    }
    /* the Cb:Cr plane has a sample for every 2x2 pixels, rounded up */
    if (fmt->chroma_cpp &&
        (plane->chroma_pitch % 4 || plane->chroma_offset % 4 ||
         plane->chroma_pitch < DIV_ROUND_UP(plane->fb_width, 2) *
                               fmt->chroma_cpp)) {
        return false;
    }
    return true;
}

/* The plane's own fields are consistent, whatever the head and VRAM. */
static bool pvdc_compose_plane_valid(const PVDCComposePlane *plane,
                                     const PVDCComposeFormat *fmt,
                                     unsigned int blend)
{
    return pvdc_compose_fb_ok(plane, fmt) && blend <= PVDC_BLEND_COVERAGE &&
           plane->src_w && plane->src_h &&
           (uint64_t)plane->src_x + plane->src_w <=
           (uint64_t)plane->fb_width << 16 &&
           (uint64_t)plane->src_y + plane->src_h <=
           (uint64_t)plane->fb_height << 16 &&
           pvdc_compose_size_ok(plane->dst_w) &&
           pvdc_compose_size_ok(plane->dst_h) &&
           pvdc_compose_pos_ok(plane->dst_x) &&
           pvdc_compose_pos_ok(plane->dst_y);
}

/*
 * The pixels the plane may sample, its source rectangle rounded out to
 * whole pixels, and the bytes reading them touches, which must lie inside
 * the plane's memory (@vram_size bytes of VRAM unless it has views of its
 * own): a YUYV pixel reads its whole macropixel (the
 * fb width is even, so that stays inside the framebuffer), an NV12 or
 * P010 one the chroma samples around it, clamped to those of the source
 * rectangle.  Sets the image and read window fields of @job.
 */
static bool pvdc_compose_source_image(PVDCComposeJob *job,
                                      uint64_t vram_size)
{
    const PVDCComposePlane *plane = job->plane;
    const PVDCComposeFormat *fmt = job->fmt;
    PVDCComposeReader *rd = &job->reader;
    uint32_t img_x1, img_y1;

    job->img_x = plane->src_x >> 16;
    job->img_y = plane->src_y >> 16;
    img_x1 = DIV_ROUND_UP((uint64_t)plane->src_x + plane->src_w, 1 << 16);
    img_y1 = DIV_ROUND_UP((uint64_t)plane->src_y + plane->src_h, 1 << 16);
    job->img_w = img_x1 - job->img_x;
    job->img_h = img_y1 - job->img_y;

    /*
     * 2-byte pixels are read in 32-bit words: whole YUYV macropixels, and
     * pixman's image of an RGB565 plane starts at an even pixel.
     */
    job->read_x0 = fmt->cpp == 2 ? job->img_x & ~1u : job->img_x;
    job->read_x1 = plane->format == PVDC_FMT_YUYV ? ROUND_UP(img_x1, 2)
                                                   : img_x1;
    if (!pvdc_compose_in_vram(plane->offset,
                              (uint64_t)plane->pitch * (img_y1 - 1) +
                              (uint64_t)job->read_x1 * fmt->cpp,
                              plane->mem || plane->fetch ? plane->mem_size
                                                         : vram_size)) {
        return false;
    }
    if (fmt->chroma_cpp) {
        rd->cx0 = job->img_x / 2;
        rd->cx1 = (img_x1 - 1) / 2 + 1;
        rd->cy0 = job->img_y / 2;
        rd->cy1 = (img_y1 - 1) / 2 + 1;
        if (!pvdc_compose_in_vram(plane->chroma_offset,
                                  (uint64_t)plane->chroma_pitch *
                                  (rd->cy1 - 1) +
                                  (uint64_t)rd->cx1 * fmt->chroma_cpp,
                                  plane->chroma_mem || plane->chroma_fetch ?
                                  plane->chroma_mem_size : vram_size)) {
            return false;
        }
    }
    /* pixman indexes lines with an int */
    return (uint64_t)plane->pitch * job->img_h <= INT32_MAX;
}

/* Where the plane shows on a head of @width x @height, and how opaque. */
static void pvdc_compose_placement(PVDCComposeJob *job, uint32_t width,
                                   uint32_t height)
{
    const PVDCComposePlane *plane = job->plane;

    job->x0 = MAX(plane->dst_x, 0);
    job->y0 = MAX(plane->dst_y, 0);
    job->x1 = MIN((int64_t)plane->dst_x + plane->dst_w, (int64_t)width);
    job->y1 = MIN((int64_t)plane->dst_y + plane->dst_h, (int64_t)height);
    job->alpha = pvdc_compose_alpha8(plane->alpha);
    job->visible = job->x0 < job->x1 && job->y0 < job->y1 && job->alpha > 0;
    job->pixel_alpha = job->fmt->alpha && job->blend != PVDC_BLEND_NONE;
    job->opaque = !job->pixel_alpha && job->alpha == 255;
}

/*
 * How image pixels map to head pixels: a plain offset when the plane is
 * an unscaled, unflipped copy at a whole-pixel source origin, else a
 * pixman transform.
 */
static void pvdc_compose_mapping(PVDCComposeJob *job)
{
    const PVDCComposePlane *plane = job->plane;
    bool flip_x = FIELD_EX32(plane->ctrl, PS_CTRL, REFLECT_X) ^
                  FIELD_EX32(plane->ctrl, PS_CTRL, ROTATE_180);
    bool flip_y = FIELD_EX32(plane->ctrl, PS_CTRL, REFLECT_Y) ^
                  FIELD_EX32(plane->ctrl, PS_CTRL, ROTATE_180);
    uint64_t scale;

    job->transformed = plane->src_w != (uint64_t)plane->dst_w << 16 ||
                       plane->src_h != (uint64_t)plane->dst_h << 16 ||
                       (plane->src_x & 0xffff) || (plane->src_y & 0xffff) ||
                       flip_x || flip_y;
    if (!job->transformed) {
        job->dx = (int32_t)(plane->src_x >> 16) - plane->dst_x;
        job->dy = (int32_t)(plane->src_y >> 16) - plane->dst_y;
        job->filter = PIXMAN_FILTER_NEAREST;
        return;
    }

    /*
     * Image coordinates as a function of p, the position relative to the
     * destination's top-left corner (pixman samples at pixel centres):
     * u = sx + p * src_w / dst_w, or sx + src_w - p * src_w / dst_w when
     * flipped, sx being the source's offset in the image.  Every term
     * stays below 2^31 in 16.16.  A source of less than 1/2^17 pixel per
     * destination pixel still gets a scale of 1/2^16: the converted path
     * divides by it.
     */
    job->filter = FIELD_EX32(plane->ctrl, PS_CTRL, FILTER_BILINEAR) ?
                  PIXMAN_FILTER_BILINEAR : PIXMAN_FILTER_NEAREST;
    pixman_transform_init_identity(&job->transform);
    scale = ((uint64_t)plane->src_w + plane->dst_w / 2) / plane->dst_w;
    job->transform.matrix[0][0] = MAX(scale, 1);
    job->transform.matrix[0][2] = plane->src_x - (job->img_x << 16);
    if (flip_x) {
        job->transform.matrix[0][0] = -job->transform.matrix[0][0];
        job->transform.matrix[0][2] += plane->src_w;
    }
    scale = ((uint64_t)plane->src_h + plane->dst_h / 2) / plane->dst_h;
    job->transform.matrix[1][1] = MAX(scale, 1);
    job->transform.matrix[1][2] = plane->src_y - (job->img_y << 16);
    if (flip_y) {
        job->transform.matrix[1][1] = -job->transform.matrix[1][1];
        job->transform.matrix[1][2] += plane->src_h;
    }
}

/*
 * Whether pixman reads the framebuffer or a converter does.  pixman reads
 * the formats it knows, from a 32-bit aligned first pixel: an image of
 * 2-byte pixels starts one pixel early when the source starts at an odd
 * one, which is harmless for a copy but would let a transformed plane
 * sample that pixel.
 */
static void pvdc_compose_reading(PVDCComposeJob *job)
{
    const PVDCComposePlane *plane = job->plane;
    const PVDCComposeFormat *fmt = job->fmt;

    job->pix_x = job->img_x;
    if (!fmt->color || (job->transformed && fmt->cpp == 2 &&
                        job->img_x % 2)) {
        job->convert = fmt->convert;
    } else if (fmt->cpp == 2) {
        job->pix_x &= ~1u;
    }
    if (job->convert && fmt->yuv_depth) {
        job->reader.yuv = pvdc_compose_yuv(plane->encoding, plane->range,
                                           fmt->yuv_depth);
    }
}

/*
 * Check @plane against a head of @width x @height and @vram_size bytes of
 * VRAM, and work out how to draw it.  Returns false if the plane is
 * invalid; a valid plane with nothing to show has job->visible false.
 */
static bool pvdc_compose_prepare(PVDCComposeJob *job,
                                 const PVDCComposePlane *plane,
                                 uint32_t width, uint32_t height,
                                 uint64_t vram_size)
{
    memset(job, 0, sizeof(*job));
    job->plane = plane;
    job->fmt = pvdc_compose_format(plane->format);
    job->blend = FIELD_EX32(plane->ctrl, PS_CTRL, BLEND);
    if (!pvdc_compose_plane_valid(plane, job->fmt, job->blend) ||
        !pvdc_compose_source_image(job, vram_size)) {
        return false;
    }
    pvdc_compose_placement(job, width, height);
    pvdc_compose_mapping(job);
    pvdc_compose_reading(job);
    return true;
}

/*
 * The image pixels, along one axis, that destination pixels [d0, d1)
 * (relative to the plane's destination origin) may sample where the axis
 * maps as u = scale * p + offset, widened for filtering and rounding and
 * clipped to [0, size).
 */
static void pvdc_compose_window(pixman_fixed_t scale, pixman_fixed_t offset,
                                int64_t d0, int64_t d1, uint32_t size,
                                int64_t *lo, int64_t *hi)
{
    int64_t a = scale * (2 * d0 + 1) / 2 + offset;
    int64_t b = scale * (2 * d1 - 1) / 2 + offset;

    *lo = MAX((MIN(a, b) >> 16) - 2, 0);
    *hi = MIN((MAX(a, b) >> 16) + 3, (int64_t)size);
}

/*
 * Draw a plane whose format is converted: straight into @dst when nothing
 * else is needed, otherwise strip by strip into a temporary image
 * composited like an XRGB8888 plane.  A strip is at most
 * PVDC_COMPOSE_CONVERT_LINES destination lines and needs at most as many
 * source lines plus filter margins (5), so the temporary stays small.
 */
/*
 * The image lines [*@r0, *@r1) (from img_y) that destination lines
 * [@y0, @y1) of @job sample, filter margins included.
 */
static void pvdc_compose_source_lines(const PVDCComposeJob *job, int32_t y0,
                                      int32_t y1, int64_t *r0, int64_t *r1)
{
    if (job->transformed) {
        pvdc_compose_window(job->transform.matrix[1][1],
                            job->transform.matrix[1][2],
                            y0 - job->plane->dst_y, y1 - job->plane->dst_y,
                            job->img_h, r0, r1);
    } else {
        *r0 = y0 + job->dy - job->img_y;
        *r1 = *r0 + (y1 - y0);
    }
}

static void pvdc_compose_draw_converted(const PVDCComposeJob *job,
                                        pixman_image_t *dst,
                                        pixman_image_t *mask,
                                        int32_t x, int32_t y,
                                        int32_t w, int32_t h)
{
    const PVDCComposePlane *plane = job->plane;
    PVDCComposeReader rd = job->reader;
    pixman_op_t op = mask ? PIXMAN_OP_OVER : PIXMAN_OP_SRC;
    uint32_t *buf = NULL;
    size_t buf_size = 0;
    int32_t lines = PVDC_COMPOSE_CONVERT_LINES;

    if (!job->transformed && !mask) {
        uint8_t *out = (uint8_t *)pixman_image_get_data(dst);
        int stride = pixman_image_get_stride(dst);

        for (int32_t row = y; row < y + h; row++) {
            job->convert(&rd, (uint32_t *)(out + (size_t)stride * row) + x,
                         x + job->dx, row + job->dy, w);
        }
        return;
    }
    if (job->transformed) {
        lines = MAX(1, MIN(PVDC_COMPOSE_CONVERT_LINES,
                           (PVDC_COMPOSE_CONVERT_LINES << 16) /
                           abs(job->transform.matrix[1][1])));
    }

    for (int32_t row = 0; row < h; row += lines) {
        int32_t n = MIN(lines, h - row);
        int64_t c0, c1, r0, r1;
        pixman_image_t *tmp;
        size_t size;

        if (job->transformed) {
            pvdc_compose_window(job->transform.matrix[0][0],
                                job->transform.matrix[0][2],
                                x - plane->dst_x, x + w - plane->dst_x,
                                job->img_w, &c0, &c1);
        } else {
            c0 = x + job->dx - job->img_x;
            c1 = c0 + w;
        }
        pvdc_compose_source_lines(job, y + row, y + row + n, &r0, &r1);
        /* a fetched band holds what its destination lines need */
        r0 = MAX(r0, (int64_t)job->band_y);
        r1 = MIN(r1, (int64_t)job->band_y + job->band_h);
        if (c0 >= c1 || r0 >= r1) {
            continue;
        }
        size = (c1 - c0) * (r1 - r0);
        if (size > buf_size) {
            g_free(buf);
            buf = g_new(uint32_t, size);
            buf_size = size;
        }
        for (int64_t r = r0; r < r1; r++) {
            job->convert(&rd, buf + (r - r0) * (c1 - c0), job->img_x + c0,
                         job->img_y + r, c1 - c0);
        }

        tmp = pixman_image_create_bits_no_clear(PIXMAN_x8r8g8b8, c1 - c0,
                                                r1 - r0, buf,
                                                (c1 - c0) * 4);
        if (!tmp) {
            break;
        }
        if (job->transformed) {
            pixman_transform_t t = job->transform;

            /* r0 and c0 stay below 2^14: exact in 16.16 */
            t.matrix[0][2] -= c0 << 16;
            t.matrix[1][2] -= r0 << 16;
            pixman_image_set_transform(tmp, &t);
            pixman_image_set_filter(tmp, job->filter, NULL, 0);
            pixman_image_set_repeat(tmp, PIXMAN_REPEAT_PAD);
            pixman_image_composite32(op, tmp, mask, dst, x - plane->dst_x,
                                     y + row - plane->dst_y, 0, 0,
                                     x, y + row, w, n);
        } else {
            pixman_image_composite32(op, tmp, mask, dst, 0, 0, 0, 0,
                                     x, y + row, w, n);
        }
        pixman_image_unref(tmp);
    }
    g_free(buf);
}

/* The image lines the job's reader holds, as pixman reads them. */
static pixman_image_t *pvdc_compose_image(const PVDCComposeJob *job,
                                          pixman_format_code_t format)
{
    const uint8_t *band = pvdc_compose_line(&job->reader,
                                            job->img_y + job->band_y);
    pixman_image_t *img;

    /* Source images are only ever read: the cast drops const for pixman. */
    img = pixman_image_create_bits_no_clear(format,
                                            job->img_x + job->img_w -
                                            job->pix_x, job->band_h,
                                            (uint32_t *)(band + job->pix_x *
                                                         job->fmt->cpp),
                                            job->reader.pitch);
    if (img && job->transformed) {
        pixman_transform_t t = job->transform;

        /* band_y stays below 2^14: exact in 16.16 */
        t.matrix[1][2] -= (pixman_fixed_t)job->band_y << 16;
        pixman_image_set_transform(img, &t);
        pixman_image_set_filter(img, job->filter, NULL, 0);
        pixman_image_set_repeat(img, PIXMAN_REPEAT_PAD);
    }
    return img;
}

#ifdef PVDC_COMPOSE_SSE2
/*
 * Bilinear filtering of an opaque plane pixman reads as XRGB8888, as
 * pixman's scaled bilinear fast path computes it, bit for bit, with less
 * work for upscales (bench/compose-bench.c: 2x -25%, 96x -60%).  pixman
 * takes each destination pixel from four source pixels with 7-bit
 * weights, ((T_l wt + B_l wb) wl + (T_r wt + B_r wb) wr) >> 14, all four
 * channels alike and exact until that shift.  The sum regroups as
 * (H_t wt + H_b wb) >> 14 with H = S_l wl + S_r wr, that is
 * 128 S_l + (S_r - S_l) wr: the horizontal pass of one source line (at
 * most 255 * 128 per channel, 16 bits), which every destination line
 * sampling that source line shares.  An upscale thus filters each source
 * line horizontally once instead of once per destination line.  Sample
 * positions and the pad repeat follow pixman_transform_point_3d() and
 * pixman's bilinear main loop: a sample left of the first pixel or right
 * of the last takes that pixel whole.  (pixman fills from a 1x1 image as
 * from a solid colour, X byte 0xff included: the caller leaves those to
 * pixman.)  Returns false, drawing nothing, when out of memory.
 */
static bool pvdc_compose_draw_bilinear(const PVDCComposeJob *job,
                                       pixman_image_t *dst, int32_t x,
                                       int32_t y, int32_t w, int32_t h)
{
    const pixman_transform_t *t = &job->transform;
    const int64_t ux = t->matrix[0][0], uy = t->matrix[1][1];
    const uint8_t *src = pvdc_compose_line(&job->reader,
                                           job->img_y + job->band_y) +
                         job->pix_x * 4;
    uint32_t pitch = job->reader.pitch;
    int64_t band_end = (int64_t)job->band_y + job->band_h - 1;
    /* destination pixels in groups of 4, the last padded */
    int32_t cols = ROUND_UP(w, 4), c_lo = INT32_MAX, c_hi = 0;
    int64_t vx, vy;
    g_autofree int32_t *xl = g_try_new(int32_t, cols);
    /* the weight of the right pixel, 4 lanes for each destination pixel */
    g_autofree __m128i *wr = g_try_new(__m128i, cols / 2);
    g_autofree __m128i *pd = g_try_new(__m128i, job->img_w);
    g_autofree uint64_t *lines = g_try_new(uint64_t, 2 * (size_t)cols);
    uint64_t *hline[2];
    int64_t tag[2] = { -1, -1 };
    uint8_t *out = (uint8_t *)pixman_image_get_data(dst);
    int stride = pixman_image_get_stride(dst);

    if (!xl || !wr || !pd || !lines) {
        return false;
    }
    hline[0] = lines;
    hline[1] = lines + cols;

    /*
     * The sample of destination pixel d (from the plane's origin) is
     * u = ux * (d + 1/2) + matrix[0][2] rounded as pixman does, minus
     * 1/2 for the pixel centres: its left pixel u >> 16 and the weight
     * of the right one (u >> 9) & 0x7f.
     */
    vx = ux * (x - job->plane->dst_x) + t->matrix[0][2] +
         ((ux * 0x8000 + 0x8000) >> 16) - 0x8000;
    for (int32_t i = 0; i < cols; i++, vx += ux) {
        int64_t left = vx >> 16;
        int weight = (vx >> 9) & 0x7f;

        if (i >= w || left < 0 || left >= job->img_w - 1) {
            left = i >= w ? xl[w - 1] : MIN(MAX(left, 0), job->img_w - 1);
            weight = 0;
        }
        xl[i] = left;
        for (int k = 0; k < 4; k++) {
            ((uint16_t *)wr)[4 * i + k] = weight;
        }
        c_lo = MIN(c_lo, left);
        c_hi = MAX(c_hi, left);
    }

    vy = uy * (y - job->plane->dst_y) + t->matrix[1][2] +
         ((uy * 0x8000 + 0x8000) >> 16) - 0x8000;
    for (int32_t row = 0; row < h; row++, vy += uy) {
        int64_t top = vy >> 16;
        int wb = (vy >> 9) & 0x7f;
        int64_t src_line[2];
        const __m128i *hl[2];
        __m128i weights;
        uint8_t *o = out + (size_t)stride * (y + row) + x * 4;

        src_line[0] = MIN(MAX(top, 0), job->img_h - 1);
        src_line[1] = MIN(MAX(top + 1, 0), job->img_h - 1);
        if (!wb) {
            src_line[1] = src_line[0];
        }
        for (int k = 0; k < 2; k++) {
            /* lines come in order: reuse either, else replace the older */
            int slot = tag[0] == src_line[k] ? 0 :
                       tag[1] == src_line[k] ? 1 :
                       tag[0] == src_line[!k] ? 1 : 0;

            if (tag[slot] != src_line[k]) {
                /* a fetched band holds the lines, the clamp keeps it so */
                const uint8_t *s = src + (size_t)pitch *
                                   (MIN(MAX(src_line[k], job->band_y),
                                        band_end) - job->band_y);
                __m128i zero = _mm_setzero_si128();

                /* (128 S_c, S_c+1 - S_c) per channel, the last pixel pad */
                for (int32_t c = c_lo; c <= c_hi; c++) {
                    __m128i p = _mm_unpacklo_epi8(
                        _mm_cvtsi32_si128(ldl_he_p(s + c * 4)), zero);
                    __m128i n = _mm_unpacklo_epi8(
                        _mm_cvtsi32_si128(ldl_he_p(s + MIN(c + 1,
                                                 (int32_t)job->img_w - 1) *
                                                   4)), zero);

                    pd[c] = _mm_unpacklo_epi64(_mm_slli_epi16(p, 7),
                                               _mm_sub_epi16(n, p));
                }
                for (int32_t i = 0; i < cols; i += 2) {
                    __m128i a = pd[xl[i]], b = pd[xl[i + 1]];

                    _mm_storeu_si128((__m128i *)&hline[slot][i],
                                     _mm_add_epi16(_mm_unpacklo_epi64(a, b),
                                                   _mm_mullo_epi16(
                                                       _mm_unpackhi_epi64(a, b),
                                                       wr[i / 2])));
                }
                tag[slot] = src_line[k];
            }
            hl[k] = (const __m128i *)hline[slot];
        }

        weights = _mm_set1_epi32((128 - wb) | wb << 16);
        for (int32_t i = 0; i < cols; i += 4) {
            __m128i p[2], px;

            for (int k = 0; k < 2; k++) {
                __m128i ht = _mm_loadu_si128(&hl[0][i / 2 + k]);
                __m128i hb = _mm_loadu_si128(&hl[1][i / 2 + k]);

                p[k] = _mm_packs_epi32(
                    _mm_srli_epi32(_mm_madd_epi16(_mm_unpacklo_epi16(ht, hb),
                                                  weights), 14),
                    _mm_srli_epi32(_mm_madd_epi16(_mm_unpackhi_epi16(ht, hb),
                                                  weights), 14));
            }
            px = _mm_packus_epi16(p[0], p[1]);
            if (i + 4 <= w) {
                _mm_storeu_si128((__m128i *)(o + i * 4), px);
            } else {
                uint32_t last[4];

                _mm_storeu_si128((__m128i *)last, px);
                memcpy(o + i * 4, last, (w - i) * 4);
            }
        }
    }
    return true;
}
#endif

/* Draw the part [x, x + w) x [y, y + h) of @job's visible rectangle. */
static void pvdc_compose_draw(const PVDCComposeJob *job, pixman_image_t *dst,
                              int32_t x, int32_t y, int32_t w, int32_t h)
{
    pixman_image_t *color = NULL, *alpha = NULL, *mask = NULL, *tmp;
    int32_t sx, sy;

    if (job->transformed) {
        sx = x - job->plane->dst_x;
        sy = y - job->plane->dst_y;
    } else {
        sx = x + job->dx - job->pix_x;
        sy = y + job->dy - job->img_y - job->band_y;
    }

    if (job->alpha < 255) {
        pixman_color_t pa = { .alpha = job->alpha * 0x101 };

        mask = pixman_image_create_solid_fill(&pa);
        if (!mask) {
            return;
        }
    }
    if (job->convert) {
        pvdc_compose_draw_converted(job, dst, mask, x, y, w, h);
        goto out;
    }
#ifdef PVDC_COMPOSE_SSE2
    if (!mask && !job->pixel_alpha && job->transformed &&
        job->filter == PIXMAN_FILTER_BILINEAR &&
        job->fmt->color == PIXMAN_x8r8g8b8 &&
        job->transform.matrix[0][0] > 0 && job->transform.matrix[1][1] > 0 &&
        (job->img_w > 1 || job->img_h > 1) &&
        pvdc_compose_draw_bilinear(job, dst, x, y, w, h)) {
        return;
    }
#endif
    color = pvdc_compose_image(job, job->fmt->color);
    if (job->pixel_alpha) {
        alpha = pvdc_compose_image(job, job->fmt->alpha);
    }
    if (!color || (job->pixel_alpha && !alpha)) {
        goto out;
    }

    if (!job->pixel_alpha) {
        pixman_image_composite32(mask ? PIXMAN_OP_OVER : PIXMAN_OP_SRC,
                                 color, mask, dst, sx, sy, 0, 0, x, y, w, h);
    } else if (job->blend == PVDC_BLEND_PREMULTI) {
        pixman_image_composite32(PIXMAN_OP_OVER, alpha, mask, dst,
                                 sx, sy, 0, 0, x, y, w, h);
    } else if (!mask) {
        pixman_image_composite32(PIXMAN_OP_OVER, color, alpha, dst,
                                 sx, sy, sx, sy, x, y, w, h);
    } else {
        /* colour IN pixel alpha is the premultiplied plane */
        int32_t lines = MIN(h, PVDC_COMPOSE_STRIP_LINES);

        tmp = pixman_image_create_bits(PIXMAN_a8r8g8b8, w, lines, NULL, 0);
        if (!tmp) {
            goto out;
        }
        for (int32_t row = 0; row < h; row += lines) {
            int32_t n = MIN(lines, h - row);

            pixman_image_composite32(PIXMAN_OP_SRC, color, alpha, tmp,
                                     sx, sy + row, sx, sy + row, 0, 0, w, n);
            pixman_image_composite32(PIXMAN_OP_OVER, tmp, mask, dst,
                                     0, 0, 0, 0, x, y + row, w, n);
        }
        pixman_image_unref(tmp);
    }

out:
    if (mask) {
        pixman_image_unref(mask);
    }
    if (alpha) {
        pixman_image_unref(alpha);
    }
    if (color) {
        pixman_image_unref(color);
    }
}

/*
 * Lines [@first, @end) of a fetched memory plane at @offset, @pitch bytes
 * apart, of which composition reads bytes [@col0, @col1) of each: a
 * pointer to line @first, its lines @out_pitch apart.  Straight into the
 * memory when those lines are contiguous in the host; else each line's
 * bytes are copied to its place in a line of *@buf (grown as needed),
 * the rest of which is never read.  NULL if out of memory.
 */
static const uint8_t *pvdc_compose_fetch_lines(PVDCComposeFetchFn *fetch,
                                               void *opaque, uint64_t offset,
                                               uint32_t pitch, uint32_t first,
                                               uint32_t end, uint64_t col0,
                                               uint64_t col1, uint8_t **buf,
                                               size_t *buf_size,
                                               uint32_t *out_pitch)
{
    uint64_t start = offset + (uint64_t)pitch * first;
    const uint8_t *p = fetch(opaque, start,
                             (uint64_t)pitch * (end - first - 1) + col1,
                             NULL);
    uint32_t stride = ROUND_UP(col1, 4);
    size_t size = (size_t)stride * (end - first);

    if (p) {
        *out_pitch = pitch;
        return p;
    }
    if (size > *buf_size) {
        g_free(*buf);
        *buf = g_try_malloc(size);
        *buf_size = *buf ? size : 0;
        if (!*buf) {
            return NULL;
        }
    }
    for (uint32_t y = first; y < end; y++) {
        fetch(opaque, start + (uint64_t)pitch * (y - first) + col0,
              col1 - col0, *buf + (size_t)stride * (y - first) + col0);
    }
    *out_pitch = stride;
    return *buf;
}

/*
 * Draw the part [x, x + w) x [y, y + h) of a plane whose memory (or Cb:Cr
 * plane) is fetched: band by band of destination lines, each drawn like
 * a plane in memory of its own from the source lines it needs (with
 * filter margins, as pvdc_compose_draw_converted() converts them).  The
 * lines of a band come straight from the memory where they are
 * contiguous in the host, else are copied, only the columns composition
 * reads: never the whole framebuffer.
 */
static void pvdc_compose_draw_fetched(const PVDCComposeJob *job,
                                      pixman_image_t *dst, int32_t x,
                                      int32_t y, int32_t w, int32_t h)
{
    const PVDCComposePlane *plane = job->plane;
    const PVDCComposeFormat *fmt = job->fmt;
    const pixman_transform_t *t = &job->transform;
    PVDCComposeJob band = *job;
    PVDCComposeReader *rd = &band.reader;
    g_autofree uint8_t *buf = NULL;
    g_autofree uint8_t *chroma_buf = NULL;
    size_t buf_size = 0, chroma_buf_size = 0;
    int32_t lines = PVDC_COMPOSE_FETCH_LINES;

    /*
     * An opaque unscaled copy in the frame's own format (a primary plane,
     * above all): each line goes from the memory straight into the
     * frame, as pixman would copy it, with no band in between.
     */
    if (plane->fetch && !job->convert && !job->transformed &&
        job->alpha == 255 && !job->pixel_alpha &&
        fmt->color == pixman_image_get_format(dst)) {
        uint8_t *out = (uint8_t *)pixman_image_get_data(dst);
        int stride = pixman_image_get_stride(dst);

        for (int32_t row = y; row < y + h; row++) {
            plane->fetch(plane->fetch_opaque,
                         plane->offset +
                         (uint64_t)plane->pitch * (row + job->dy) +
                         (uint64_t)(x + job->dx) * fmt->cpp,
                         (uint64_t)w * fmt->cpp,
                         out + (size_t)stride * row + (size_t)x * fmt->cpp);
        }
        return;
    }
    /* as many destination lines as take PVDC_COMPOSE_FETCH_LINES */
    if (job->transformed) {
        lines = MAX(1, MIN((int64_t)PVDC_COMPOSE_FETCH_LINES << 16,
                           (int64_t)h * abs(t->matrix[1][1])) /
                       abs(t->matrix[1][1]));
    }
    for (int32_t row = 0; row < h; row += lines) {
        int32_t n = MIN(lines, h - row);
        int64_t r0, r1;

        pvdc_compose_source_lines(job, y + row, y + row + n, &r0, &r1);
        if (r0 >= r1) {
            continue;
        }
        band.band_y = r0;
        band.band_h = r1 - r0;
        if (plane->fetch) {
            rd->line0 = job->img_y + r0;
            rd->mem = pvdc_compose_fetch_lines(plane->fetch,
                                               plane->fetch_opaque,
                                               plane->offset, plane->pitch,
                                               rd->line0, job->img_y + r1,
                                               (uint64_t)job->read_x0 *
                                               fmt->cpp,
                                               (uint64_t)job->read_x1 *
                                               fmt->cpp,
                                               &buf, &buf_size, &rd->pitch);
            if (!rd->mem) {
                return;
            }
        }
        if (fmt->chroma_cpp && plane->chroma_fetch) {
            /* luma line l takes chroma lines l / 2 and one next to it */
            rd->chroma_line0 = MAX((job->img_y + r0) / 2, rd->cy0 + 1) - 1;
            rd->chroma = pvdc_compose_fetch_lines(
                plane->chroma_fetch, plane->chroma_fetch_opaque,
                plane->chroma_offset, plane->chroma_pitch, rd->chroma_line0,
                MIN((job->img_y + r1 - 1) / 2 + 2, rd->cy1),
                (uint64_t)rd->cx0 * fmt->chroma_cpp,
                (uint64_t)rd->cx1 * fmt->chroma_cpp, &chroma_buf,
                &chroma_buf_size, &rd->chroma_pitch);
            if (!rd->chroma) {
                return;
            }
        }
        pvdc_compose_draw(&band, dst, x, y + row, w, n);
    }
}

/* Draw [x0, x1) x [y0, y1) of @job's visible rectangle, if not empty. */
static void pvdc_compose_draw_part(const PVDCComposeJob *job,
                                   pixman_image_t *dst, int32_t x0,
                                   int32_t y0, int32_t x1, int32_t y1)
{
    if (x0 >= x1 || y0 >= y1) {
        return;
    }
    if (job->plane->fetch || job->plane->chroma_fetch) {
        pvdc_compose_draw_fetched(job, dst, x0, y0, x1 - x0, y1 - y0);
    } else {
        pvdc_compose_draw(job, dst, x0, y0, x1 - x0, y1 - y0);
    }
}

static bool pvdc_compose_scene_ok(const PVDCComposeScene *scene)
{
    return pvdc_compose_size_ok(scene->width) &&
           pvdc_compose_size_ok(scene->height) &&
           scene->num_planes <= ARRAY_SIZE(scene->planes);
}

/* Check every plane of @scene; @order gets them bottom to top. */
static bool pvdc_compose_prepare_scene(const PVDCComposeScene *scene,
                                       uint64_t vram_size,
                                       PVDCComposeJob *jobs,
                                       unsigned int *order)
{
    if (!pvdc_compose_scene_ok(scene)) {
        return false;
    }
    for (unsigned int i = 0; i < scene->num_planes; i++) {
        unsigned int j = i;

        if (!pvdc_compose_prepare(&jobs[i], &scene->planes[i], scene->width,
                                  scene->height, vram_size)) {
            return false;
        }
        /* insertion sort, stable: equal zpos keep array order */
        while (j > 0 && scene->planes[order[j - 1]].zpos >
                        scene->planes[i].zpos) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = i;
    }
    return true;
}

bool pvdc_compose(const PVDCComposeScene *scene, const uint8_t *vram,
                  uint64_t vram_size, pixman_image_t *dst,
                  const QemuRect *damage)
{
    PVDCComposeJob jobs[ARRAY_SIZE(scene->planes)];
    unsigned int order[ARRAY_SIZE(scene->planes)];
    int32_t cx0 = 0, cy0 = 0, cx1, cy1;
    unsigned int bottom = 0;
    bool covered = false;

    if (!dst || pixman_image_get_format(dst) != PIXMAN_x8r8g8b8 ||
        !pvdc_compose_scene_ok(scene) ||
        pixman_image_get_width(dst) != scene->width ||
        pixman_image_get_height(dst) != scene->height ||
        !pvdc_compose_prepare_scene(scene, vram_size, jobs, order)) {
        return false;
    }
    /* fetched memory is read a band at a time, when it is drawn */
    for (unsigned int i = 0; i < scene->num_planes; i++) {
        const PVDCComposePlane *plane = &scene->planes[i];
        PVDCComposeReader *rd = &jobs[i].reader;

        if (!plane->fetch) {
            rd->mem = (plane->mem ? plane->mem : vram) + plane->offset;
            rd->pitch = plane->pitch;
        }
        if (jobs[i].fmt->chroma_cpp && !plane->chroma_fetch) {
            rd->chroma = (plane->chroma_mem ? plane->chroma_mem : vram) +
                         plane->chroma_offset;
            rd->chroma_pitch = plane->chroma_pitch;
        }
        jobs[i].band_h = jobs[i].img_h;
    }

    cx1 = scene->width;
    cy1 = scene->height;
    if (damage) {
        cx0 = MAX(cx0, damage->x);
        cy0 = MAX(cy0, damage->y);
        cx1 = MIN(cx1, damage->x + damage->width);
        cy1 = MIN(cy1, damage->y + damage->height);
    }
    if (cx0 >= cx1 || cy0 >= cy1) {
        return true;
    }

    /* Start from the topmost opaque plane that hides everything below. */
    for (unsigned int i = scene->num_planes; i-- > 0;) {
        const PVDCComposeJob *job = &jobs[order[i]];

        if (job->visible && job->opaque && job->x0 <= cx0 &&
            job->y0 <= cy0 && job->x1 >= cx1 && job->y1 >= cy1) {
            bottom = i;
            covered = true;
            break;
        }
    }
    if (!covered) {
        uint32_t bg = scene->background;
        pixman_color_t color = {
            .red = extract32(bg, 16, 8) * 0x101,
            .green = extract32(bg, 8, 8) * 0x101,
            .blue = extract32(bg, 0, 8) * 0x101,
            .alpha = 0xffff,
        };
        pixman_rectangle16_t rect = { cx0, cy0, cx1 - cx0, cy1 - cy0 };

        pixman_image_fill_rectangles(PIXMAN_OP_SRC, dst, &color, 1, &rect);
    }

    for (unsigned int i = bottom; i < scene->num_planes; i++) {
        const PVDCComposeJob *job = &jobs[order[i]];
        int32_t x0 = MAX(job->x0, cx0), y0 = MAX(job->y0, cy0);
        int32_t x1 = MIN(job->x1, cx1), y1 = MIN(job->y1, cy1);
        const PVDCComposeJob *over = NULL;
        int64_t hidden = 0;

        if (!job->visible || x0 >= x1 || y0 >= y1) {
            continue;
        }
        /*
         * The opaque plane above that hides most of it (a video over a
         * desktop): only the rest of it is drawn, in up to four parts.
         */
        for (unsigned int j = i + 1; j < scene->num_planes; j++) {
            const PVDCComposeJob *o = &jobs[order[j]];
            int64_t area = (int64_t)MAX(MIN(x1, o->x1) - MAX(x0, o->x0), 0) *
                           MAX(MIN(y1, o->y1) - MAX(y0, o->y0), 0);

            if (o->visible && o->opaque && area > hidden) {
                over = o;
                hidden = area;
            }
        }
        if (!over) {
            pvdc_compose_draw_part(job, dst, x0, y0, x1, y1);
            continue;
        }
        pvdc_compose_draw_part(job, dst, x0, y0, x1, MAX(over->y0, y0));
        pvdc_compose_draw_part(job, dst, x0, MIN(over->y1, y1), x1, y1);
        pvdc_compose_draw_part(job, dst, x0, MAX(over->y0, y0),
                               MAX(over->x0, x0), MIN(over->y1, y1));
        pvdc_compose_draw_part(job, dst, MIN(over->x1, x1),
                               MAX(over->y0, y0), x1, MIN(over->y1, y1));
    }
    pvdc_compose_color_apply(scene->color, dst, cx0, cy0, cx1 - cx0,
                             cy1 - cy0);
    return true;
}

bool pvdc_compose_direct(const PVDCComposeScene *scene, uint64_t vram_size,
                         PVDCComposeDirect *direct)
{
    PVDCComposeJob jobs[ARRAY_SIZE(scene->planes)];
    unsigned int order[ARRAY_SIZE(scene->planes)];
    const PVDCComposeJob *shown = NULL;
    const PVDCComposePlane *plane;
    pixman_format_code_t format;

    /* the console shows VRAM as it is: no colour pipeline, no conversion */
    if (pvdc_compose_color_active(scene->color) ||
        !pvdc_compose_prepare_scene(scene, vram_size, jobs, order)) {
        return false;
    }
    for (unsigned int i = 0; i < scene->num_planes; i++) {
        if (jobs[i].visible) {
            if (shown) {
                return false;
            }
            shown = &jobs[i];
        }
    }
    if (!shown || shown->plane->mem || shown->plane->fetch ||
        shown->transformed ||
        shown->alpha != 255 ||
        shown->x0 != 0 || shown->y0 != 0 ||
        shown->x1 != scene->width || shown->y1 != scene->height) {
        return false;
    }
    /*
     * Pixel alpha only matters where the background shows through:
     * premultiplied pixels over black are the pixels themselves.
     */
    if (shown->pixel_alpha && (shown->blend != PVDC_BLEND_PREMULTI ||
                               (scene->background & 0xffffff))) {
        return false;
    }
    /*
     * What QEMU's display surfaces can describe: never a format the
     * engine converts (those have no pixman format), nor RGB565 on a
     * big-endian host.
     */
    format = shown->fmt->color;
    if (format != PIXMAN_LE_x8r8g8b8 && format != PIXMAN_LE_x8b8g8r8 &&
        format != PVDC_LE_r5g6b5) {
        return false;
    }

    plane = shown->plane;
    direct->format = format;
    direct->stride = plane->pitch;
    direct->offset = plane->offset + (uint64_t)plane->pitch * shown->dy +
                     (uint64_t)shown->dx * shown->fmt->cpp;
    return true;
}

uint32_t pvdc_compose_crc32(pixman_image_t *img)
{
    pixman_image_t *line = NULL;
    uint32_t *pixels;
    uint32_t crc = crc32(0, NULL, 0);
    int width, height;

    if (!img) {
        return crc;
    }
    width = pixman_image_get_width(img);
    height = pixman_image_get_height(img);
    if (width <= 0 || height <= 0) {
        return crc;
    }
    pixels = g_new(uint32_t, width);
    if (pixman_image_get_format(img) != PIXMAN_x8r8g8b8) {
        line = pixman_image_create_bits(PIXMAN_x8r8g8b8, width, 1, pixels,
                                        width * 4);
    }

    for (int y = 0; y < height; y++) {
        const uint32_t *row;

        if (line) {
            pixman_image_composite32(PIXMAN_OP_SRC, img, NULL, line,
                                     0, y, 0, 0, 0, 0, width, 1);
            row = pixels;
        } else {
            row = (const uint32_t *)((const uint8_t *)
                                     pixman_image_get_data(img) +
                                     (size_t)pixman_image_get_stride(img) *
                                     y);
        }
        for (int x = 0; x < width; x++) {
            pixels[x] = cpu_to_le32(row[x] & 0xffffff);
        }
        crc = crc32(crc, (const Bytef *)pixels, width * 4);
    }

    if (line) {
        pixman_image_unref(line);
    }
    g_free(pixels);
    return crc;
}

static void pvdc_compose_rect_set(QemuRect *rect, int64_t x0, int64_t y0,
                                  int64_t x1, int64_t y1)
{
    if (x0 < x1 && y0 < y1) {
        qemu_rect_init(rect, x0, y0, x1 - x0, y1 - y0);
    } else {
        qemu_rect_init(rect, 0, 0, 0, 0);
    }
}

bool pvdc_compose_plane_rect(const PVDCComposePlane *plane, uint32_t width,
                             uint32_t height, QemuRect *rect)
{
    PVDCComposeJob job;

    qemu_rect_init(rect, 0, 0, 0, 0);
    if (!pvdc_compose_size_ok(width) || !pvdc_compose_size_ok(height) ||
        !pvdc_compose_prepare(&job, plane, width, height, UINT64_MAX) ||
        !job.visible) {
        return false;
    }
    pvdc_compose_rect_set(rect, job.x0, job.y0, job.x1, job.y1);
    return true;
}

unsigned int pvdc_compose_plane_sources(const PVDCComposePlane *plane,
                                        PVDCComposeSpan span[2])
{
    PVDCComposeJob job;
    const PVDCComposeReader *rd = &job.reader;

    if (!pvdc_compose_prepare(&job, plane, PVDC_COMPOSE_MAX_SIZE,
                              PVDC_COMPOSE_MAX_SIZE, UINT64_MAX)) {
        return 0;
    }
    span[0] = (PVDCComposeSpan) {
        .offset = plane->offset + (uint64_t)plane->pitch * job.img_y +
                  (uint64_t)job.read_x0 * job.fmt->cpp,
        .row_bytes = (uint64_t)(job.read_x1 - job.read_x0) * job.fmt->cpp,
        .rows = job.img_h,
        .pitch = plane->pitch,
    };
    if (!job.fmt->chroma_cpp) {
        return 1;
    }
    span[1] = (PVDCComposeSpan) {
        .offset = plane->chroma_offset +
                  (uint64_t)plane->chroma_pitch * rd->cy0 +
                  (uint64_t)rd->cx0 * job.fmt->chroma_cpp,
        .row_bytes = (uint64_t)(rd->cx1 - rd->cx0) * job.fmt->chroma_cpp,
        .rows = rd->cy1 - rd->cy0,
        .pitch = plane->chroma_pitch,
    };
    return 2;
}

static int64_t pvdc_compose_div_floor(int64_t n, int64_t d)
{
    return n >= 0 ? n / d : -((-n + d - 1) / d);
}

static int64_t pvdc_compose_div_ceil(int64_t n, int64_t d)
{
    return n >= 0 ? (n + d - 1) / d : -(-n / d);
}

/*
 * Map the framebuffer pixels [*lo, *hi) of one axis to the destination
 * pixels, relative to the destination's first one, that may sample them.
 */
static void pvdc_compose_map_axis(int64_t *lo, int64_t *hi, uint32_t src,
                                  uint32_t src_size, uint32_t dst_size,
                                  bool flip, int64_t pad)
{
    int64_t a, b;

    a = pvdc_compose_div_floor((((*lo - pad) << 16) - (int64_t)src) *
                               dst_size, src_size) - pad;
    b = pvdc_compose_div_ceil((((*hi + pad) << 16) - (int64_t)src) *
                              dst_size, src_size) + pad;
    a = MAX(a, 0);
    b = MIN(b, (int64_t)dst_size);
    if (flip) {
        int64_t t = a;

        a = dst_size - b;
        b = dst_size - t;
    }
    *lo = a;
    *hi = b;
}

/*
 * The framebuffer pixels [*x0, *x1) x [*y0, *y1) of one memory plane (at
 * @offset, @pitch bytes a line, @height lines of @width pixels of @cpp
 * bytes) that the VRAM bytes [@start, @end) overlap, as a bounding box.
 * Returns false if they overlap none (padding at a line's end included).
 */
static bool pvdc_compose_written(uint64_t offset, uint32_t pitch,
                                 uint32_t width, uint32_t height,
                                 unsigned int cpp, uint64_t start,
                                 uint64_t end, int64_t *x0, int64_t *x1,
                                 int64_t *y0, int64_t *y1)
{
    uint64_t size = (uint64_t)pitch * (height - 1) + (uint64_t)width * cpp;
    uint64_t first, last;

    if (end <= offset) {
        return false;
    }
    first = start > offset ? start - offset : 0;
    last = MIN(end - offset, size) - 1;
    if (first > last) {
        return false;
    }
    *y0 = first / pitch;
    *y1 = last / pitch + 1;
    *x0 = 0;
    *x1 = width;
    if (*y1 - *y0 == 1) {
        *x0 = first % pitch / cpp;
        *x1 = MIN(last % pitch / cpp + 1, *x1);
    }
    return *x0 < *x1;
}

/* Add to @rect what the framebuffer pixels [x0, x1) x [y0, y1) show. */
static void pvdc_compose_damage_add(const PVDCComposeJob *job, int64_t x0,
                                    int64_t x1, int64_t y0, int64_t y1,
                                    QemuRect *rect)
{
    const PVDCComposePlane *plane = job->plane;
    /* Transformed planes may sample one pixel further (rounding, filter). */
    int64_t pad = job->transformed ? 1 : 0;
    QemuRect r;

    pvdc_compose_map_axis(&x0, &x1, plane->src_x, plane->src_w, plane->dst_w,
                          job->transform.matrix[0][0] < 0, pad);
    pvdc_compose_map_axis(&y0, &y1, plane->src_y, plane->src_h, plane->dst_h,
                          job->transform.matrix[1][1] < 0, pad);
    x0 = MAX(x0 + plane->dst_x, job->x0);
    x1 = MIN(x1 + plane->dst_x, job->x1);
    y0 = MAX(y0 + plane->dst_y, job->y0);
    y1 = MIN(y1 + plane->dst_y, job->y1);
    pvdc_compose_rect_set(&r, x0, y0, x1, y1);
    pvdc_compose_rect_union(rect, &r);
}

bool pvdc_compose_plane_damage(const PVDCComposePlane *plane, uint32_t width,
                               uint32_t height, uint64_t start, uint64_t len,
                               QemuRect *rect)
{
    PVDCComposeJob job;
    uint64_t end;
    int64_t x0, x1, y0, y1;

    qemu_rect_init(rect, 0, 0, 0, 0);
    if (!len || !pvdc_compose_size_ok(width) ||
        !pvdc_compose_size_ok(height) ||
        !pvdc_compose_prepare(&job, plane, width, height, UINT64_MAX) ||
        !job.visible) {
        return false;
    }
    end = len > UINT64_MAX - start ? UINT64_MAX : start + len;

    if (pvdc_compose_written(plane->offset, plane->pitch, plane->fb_width,
                             plane->fb_height, job.fmt->cpp, start, end,
                             &x0, &x1, &y0, &y1)) {
        /* a YUYV macropixel's chroma belongs to both its pixels */
        if (plane->format == PVDC_FMT_YUYV) {
            x0 = ROUND_DOWN(x0, 2);
            x1 = ROUND_UP(x1, 2);
        }
        pvdc_compose_damage_add(&job, x0, x1, y0, y1, rect);
    }
    /*
     * Chroma sample (j, k) is upsampled into the pixels 2j - 1 .. 2j + 1
     * of the lines 2k - 1 .. 2k + 2.
     */
    if (job.fmt->chroma_cpp &&
        pvdc_compose_written(plane->chroma_offset, plane->chroma_pitch,
                             DIV_ROUND_UP(plane->fb_width, 2),
                             DIV_ROUND_UP(plane->fb_height, 2),
                             job.fmt->chroma_cpp, start, end,
                             &x0, &x1, &y0, &y1)) {
        pvdc_compose_damage_add(&job, MAX(2 * x0 - 1, 0),
                                MIN(2 * x1, (int64_t)plane->fb_width),
                                MAX(2 * y0 - 1, 0),
                                MIN(2 * y1 + 1, (int64_t)plane->fb_height),
                                rect);
    }
    return rect->width && rect->height;
}

unsigned int pvdc_compose_plane_vram(const PVDCComposePlane *plane,
                                     uint64_t start[2], uint64_t end[2])
{
    const PVDCComposeFormat *fmt = pvdc_compose_format(plane->format);
    uint64_t len;

    if (!pvdc_compose_fb_ok(plane, fmt)) {
        return 0;
    }
    len = (uint64_t)plane->pitch * (plane->fb_height - 1) +
          (uint64_t)plane->fb_width * fmt->cpp;
    start[0] = plane->offset;
    end[0] = len > UINT64_MAX - start[0] ? UINT64_MAX : start[0] + len;
    if (!fmt->chroma_cpp) {
        return 1;
    }
    len = (uint64_t)plane->chroma_pitch *
          (DIV_ROUND_UP(plane->fb_height, 2) - 1) +
          (uint64_t)DIV_ROUND_UP(plane->fb_width, 2) * fmt->chroma_cpp;
    start[1] = plane->chroma_offset;
    end[1] = len > UINT64_MAX - start[1] ? UINT64_MAX : start[1] + len;
    return 2;
}

void pvdc_compose_rect_union(QemuRect *acc, const QemuRect *rect)
{
    if (!rect->width || !rect->height) {
        return;
    }
    if (!acc->width || !acc->height) {
        *acc = *rect;
        return;
    }
    pvdc_compose_rect_set(acc, MIN(acc->x, rect->x), MIN(acc->y, rect->y),
                          MAX(acc->x + acc->width, rect->x + rect->width),
                          MAX(acc->y + acc->height, rect->y + rect->height));
}
