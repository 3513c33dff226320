/*
 * pvdc: paravirtual display controller - plane composition engine.
 *
 * Planes are drawn bottom to top (zpos order) over the background with
 * pixman, straight from images that wrap the framebuffers in VRAM: no
 * plane is copied unless its format needs converting or its blend
 * mode a premultiplied version of it, and then a few lines at a time.
 * Only the visible part of each plane inside the damaged rectangle is
 * composited, and planes hidden under an opaque plane covering that
 * rectangle are not drawn at all.
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
 * edges where both change.)  Plane alpha is applied with pixman's 8-bit
 * precision, rounded from the 16-bit register.
 *
 * Geometry: the source rectangle (16.16) is mapped onto the destination
 * rectangle by a pixman affine transform that also carries the 180 degree
 * rotation and the reflections; planes that need none of it are plain
 * copies, pixman's fastest path.  The scale factor src / dst is rounded to
 * 16.16, which moves a sample by at most dst_w / 2^17 pixels.  Samples
 * never leave the source rectangle rounded out to whole pixels (pad
 * repeat; for 2-byte formats the left edge is rounded down to an even
 * pixel), so bilinear filtering clamps at the edges instead of fading to
 * transparent.
 *
 * Copyright (c) 2026 The pvdc authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include <zlib.h>
#include "qemu/bitops.h"
#include "qemu/bswap.h"
#include "pvdc-compose.h"
#include "pvdc-fields.h"

/* Lines premultiplied at a time for translucent coverage-blended planes. */
#define PVDC_COMPOSE_STRIP_LINES 32
/* Destination lines converted at a time for YUYV and XRGB2101010 planes. */
#define PVDC_COMPOSE_CONVERT_LINES 64

/*
 * pixman formats are host-endian, framebuffers little-endian: the 8888
 * formats have byte-swapped pixman equivalents, RGB565 has not, so a
 * big-endian host leaves RGB565 planes out.
 */
#if HOST_BIG_ENDIAN
#define PVDC_LE_r5g6b5          0
#else
#define PVDC_LE_r5g6b5          PIXMAN_r5g6b5
#endif

static PVDCComposeConvertFn pvdc_compose_yuyv_line;
static PVDCComposeConvertFn pvdc_compose_xrgb2101010_line;

/*
 * Formats with a @convert function are converted by the engine into
 * XRGB8888 strips, then composited like any RGB plane (@color is the
 * format of the converted pixels).  pixman reads them correctly itself,
 * through transforms and filters, but far too slowly: its PIXMAN_yuy2
 * fetcher took 177 ms to show a 1280x720 YUYV plane at 1920x1080 with
 * bilinear filtering and its wide pipeline 42 ms for a 1920x1080
 * XRGB2101010 plane, against 7 ms and 3.6 ms converted (same machine; a
 * 1920x1080 XRGB8888 plane takes 1.4 ms).  Converting also makes both
 * formats independent of the host's byte order, which pixman's are not.
 */
const PVDCComposeFormat pvdc_compose_formats[PVDC_COMPOSE_NUM_FORMATS] = {
    { PVDC_FMT_XRGB8888, 4, PIXMAN_LE_x8r8g8b8, 0, NULL },
    { PVDC_FMT_ARGB8888, 4, PIXMAN_LE_x8r8g8b8, PIXMAN_LE_a8r8g8b8, NULL },
    { PVDC_FMT_XBGR8888, 4, PIXMAN_LE_x8b8g8r8, 0, NULL },
    { PVDC_FMT_ABGR8888, 4, PIXMAN_LE_x8b8g8r8, PIXMAN_LE_a8b8g8r8, NULL },
    { PVDC_FMT_RGB565, 2, PVDC_LE_r5g6b5, 0, NULL },
    { PVDC_FMT_XRGB2101010, 4, PIXMAN_x8r8g8b8, 0,
      pvdc_compose_xrgb2101010_line },
    { PVDC_FMT_YUYV, 2, PIXMAN_x8r8g8b8, 0, pvdc_compose_yuyv_line },
};

/* One plane, checked and reduced to what pixman needs. */
typedef struct PVDCComposeJob {
    const PVDCComposePlane *plane;
    const PVDCComposeFormat *fmt;
    unsigned int blend;         /* PVDC_BLEND_* */
    bool pixel_alpha;           /* blending uses the pixels' alpha */
    uint8_t alpha;              /* plane alpha as pixman applies it */
    bool visible;
    bool opaque;                /* hides whatever is below it */
    /* visible part on the head: [x0, x1) x [y0, y1) */
    int32_t x0, y0, x1, y1;
    /* the framebuffer pixels the plane may sample, as one pixman image */
    uint64_t img_offset;
    uint32_t img_w, img_h;
    bool transformed;
    pixman_transform_t transform;
    pixman_filter_t filter;
    /* without transform: image pixel = head pixel + (dx, dy) */
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

/* The plane's own fields are consistent, whatever the head and VRAM. */
static bool pvdc_compose_plane_valid(const PVDCComposePlane *plane,
                                     const PVDCComposeFormat *fmt,
                                     unsigned int blend)
{
    if (!fmt || blend > PVDC_BLEND_COVERAGE ||
        !pvdc_compose_size_ok(plane->fb_width) ||
        !pvdc_compose_size_ok(plane->fb_height) ||
        (plane->format == PVDC_FMT_YUYV && plane->fb_width % 2) ||
        plane->pitch % 4 || plane->offset % 4 ||
        plane->pitch < plane->fb_width * fmt->cpp) {
        return false;
    }
    return plane->src_w && plane->src_h &&
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
 * The pixels pixman may sample: the source rectangle rounded out to whole
 * pixels, which must lie inside @vram_size bytes of VRAM.  For 2-byte
 * formats the left edge is rounded down to an even pixel so that pixman
 * gets a 32-bit aligned pointer (and YUYV whole macropixels); the fb width
 * is even for YUYV, so rounding the right edge up stays inside the
 * framebuffer.  Sets the image fields of @job and its top-left pixel in
 * @img_x, @img_y.
 */
static bool pvdc_compose_source_image(PVDCComposeJob *job,
                                      uint64_t vram_size,
                                      uint32_t *img_x, uint32_t *img_y)
{
    const PVDCComposePlane *plane = job->plane;
    unsigned int cpp = job->fmt->cpp;
    uint32_t img_x1, img_y1;
    uint64_t img_end;

    *img_x = plane->src_x >> 16;
    *img_y = plane->src_y >> 16;
    img_x1 = DIV_ROUND_UP((uint64_t)plane->src_x + plane->src_w, 1 << 16);
    img_y1 = DIV_ROUND_UP((uint64_t)plane->src_y + plane->src_h, 1 << 16);
    if (cpp == 2) {
        *img_x &= ~1u;
    }
    if (plane->format == PVDC_FMT_YUYV) {
        img_x1 = ROUND_UP(img_x1, 2);
    }
    job->img_w = img_x1 - *img_x;
    job->img_h = img_y1 - *img_y;

    img_end = (uint64_t)plane->pitch * (img_y1 - 1) + (uint64_t)img_x1 * cpp;
    if (plane->offset > vram_size || img_end > vram_size - plane->offset) {
        return false;
    }
    /* pixman indexes lines with an int */
    if ((uint64_t)plane->pitch * job->img_h > INT32_MAX) {
        return false;
    }
    job->img_offset = plane->offset + (uint64_t)plane->pitch * *img_y +
                      (uint64_t)*img_x * cpp;
    return true;
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
    job->visible = job->x0 < job->x1 && job->y0 < job->y1 &&
                   job->alpha > 0 && job->fmt->color;
    job->pixel_alpha = job->fmt->alpha && job->blend != PVDC_BLEND_NONE;
    job->opaque = !job->pixel_alpha && job->alpha == 255;
}

/*
 * How image pixels map to head pixels: a plain offset when the plane is
 * an unscaled, unflipped copy at a whole-pixel source origin, else a
 * pixman transform.
 */
static void pvdc_compose_mapping(PVDCComposeJob *job, uint32_t img_x,
                                 uint32_t img_y)
{
    const PVDCComposePlane *plane = job->plane;
    bool flip_x = FIELD_EX32(plane->ctrl, PS_CTRL, REFLECT_X) ^
                  FIELD_EX32(plane->ctrl, PS_CTRL, ROTATE_180);
    bool flip_y = FIELD_EX32(plane->ctrl, PS_CTRL, REFLECT_Y) ^
                  FIELD_EX32(plane->ctrl, PS_CTRL, ROTATE_180);

    if (plane->src_w == (uint64_t)plane->dst_w << 16 &&
        plane->src_h == (uint64_t)plane->dst_h << 16 &&
        !(plane->src_x & 0xffff) && !(plane->src_y & 0xffff) &&
        !flip_x && !flip_y) {
        job->dx = (int32_t)(plane->src_x >> 16) - img_x - plane->dst_x;
        job->dy = (int32_t)(plane->src_y >> 16) - img_y - plane->dst_y;
        job->filter = PIXMAN_FILTER_NEAREST;
        return;
    }

    /*
     * Image coordinates as a function of p, the position relative to the
     * destination's top-left corner (pixman samples at pixel centres):
     * u = sx + p * src_w / dst_w, or sx + src_w - p * src_w / dst_w when
     * flipped.  Every term stays below 2^31 in 16.16.
     */
    job->transformed = true;
    job->filter = FIELD_EX32(plane->ctrl, PS_CTRL, FILTER_BILINEAR) ?
                  PIXMAN_FILTER_BILINEAR : PIXMAN_FILTER_NEAREST;
    pixman_transform_init_identity(&job->transform);
    job->transform.matrix[0][0] =
        ((uint64_t)plane->src_w + plane->dst_w / 2) / plane->dst_w;
    job->transform.matrix[0][2] = plane->src_x - (img_x << 16);
    if (flip_x) {
        job->transform.matrix[0][0] = -job->transform.matrix[0][0];
        job->transform.matrix[0][2] += plane->src_w;
    }
    job->transform.matrix[1][1] =
        ((uint64_t)plane->src_h + plane->dst_h / 2) / plane->dst_h;
    job->transform.matrix[1][2] = plane->src_y - (img_y << 16);
    if (flip_y) {
        job->transform.matrix[1][1] = -job->transform.matrix[1][1];
        job->transform.matrix[1][2] += plane->src_h;
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
    uint32_t img_x, img_y;

    memset(job, 0, sizeof(*job));
    job->plane = plane;
    job->fmt = pvdc_compose_format(plane->format);
    job->blend = FIELD_EX32(plane->ctrl, PS_CTRL, BLEND);
    if (!pvdc_compose_plane_valid(plane, job->fmt, job->blend) ||
        !pvdc_compose_source_image(job, vram_size, &img_x, &img_y)) {
        return false;
    }
    pvdc_compose_placement(job, width, height);
    pvdc_compose_mapping(job, img_x, img_y);
    return true;
}

/*
 * BT.601 limited-range YUV to RGB in 16.16 fixed point, by table: per
 * channel one addition and one clamping lookup (no branch to mispredict),
 * about three times faster than computing it.  The luma term carries the
 * rounding and an offset of 384 so that the sum of any luma and chroma
 * terms indexes @clamp within 107..918.
 */
static struct {
    int32_t y[256];
    int32_t r_v[256];
    int32_t g_u[256];
    int32_t g_v[256];
    int32_t b_u[256];
    uint8_t clamp[1024];
} pvdc_compose_yuv;

static void pvdc_compose_yuv_init(void)
{
    static gsize done;

    if (g_once_init_enter(&done)) {
        for (int i = 0; i < 256; i++) {
            pvdc_compose_yuv.y[i] = (i - 16) * 76309 + 0x8000 + (384 << 16);
            pvdc_compose_yuv.r_v[i] = (i - 128) * 104597;
            pvdc_compose_yuv.g_u[i] = (i - 128) * -25675;
            pvdc_compose_yuv.g_v[i] = (i - 128) * -53279;
            pvdc_compose_yuv.b_u[i] = (i - 128) * 132201;
        }
        for (int i = 0; i < 1024; i++) {
            pvdc_compose_yuv.clamp[i] = MIN(MAX(i - 384, 0), 255);
        }
        g_once_init_leave(&done, 1);
    }
}

static inline uint32_t pvdc_compose_yuv_pixel(uint8_t y, int32_t r,
                                              int32_t g, int32_t b)
{
    int32_t luma = pvdc_compose_yuv.y[y];

    return 0xff000000 |
           (uint32_t)pvdc_compose_yuv.clamp[(luma + r) >> 16] << 16 |
           (uint32_t)pvdc_compose_yuv.clamp[(luma + g) >> 16] << 8 |
           pvdc_compose_yuv.clamp[(luma + b) >> 16];
}

/* The two pixels of the macropixel at @in, as XRGB8888. */
static inline void pvdc_compose_yuyv_pair(uint32_t *out, const uint8_t *in)
{
    int32_t r = pvdc_compose_yuv.r_v[in[3]];
    int32_t g = pvdc_compose_yuv.g_u[in[1]] + pvdc_compose_yuv.g_v[in[3]];
    int32_t b = pvdc_compose_yuv.b_u[in[1]];

    out[0] = pvdc_compose_yuv_pixel(in[0], r, g, b);
    out[1] = pvdc_compose_yuv_pixel(in[2], r, g, b);
}

/*
 * Convert @width YUYV pixels of @line starting at pixel @x (any parity:
 * a pixel's chroma is that of its macropixel) to host-endian XRGB8888.
 */
static void pvdc_compose_yuyv_line(uint32_t *out, const uint8_t *line,
                                   uint32_t x, uint32_t width)
{
    const uint8_t *in = line + (x & ~1u) * 2;
    uint32_t pair[2];

    pvdc_compose_yuv_init();
    if (x & 1 && width) {
        pvdc_compose_yuyv_pair(pair, in);
        *out++ = pair[1];
        in += 4;
        width--;
    }
    for (; width >= 2; width -= 2, out += 2, in += 4) {
        pvdc_compose_yuyv_pair(out, in);
    }
    if (width) {
        pvdc_compose_yuyv_pair(pair, in);
        *out = pair[0];
    }
}

/* The 8 most significant bits of each 10-bit channel. */
static void pvdc_compose_xrgb2101010_line(uint32_t *out, const uint8_t *line,
                                          uint32_t x, uint32_t width)
{
    for (uint32_t i = 0; i < width; i++) {
        uint32_t p = ldl_le_p(line + (x + i) * 4);

        out[i] = 0xff000000 | (p >> 6 & 0xff0000) | (p >> 4 & 0xff00) |
                 (p >> 2 & 0xff);
    }
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
 * source lines plus filter margins (6), so the temporary stays small.
 */
static void pvdc_compose_draw_converted(const PVDCComposeJob *job,
                                        const uint8_t *vram,
                                        pixman_image_t *dst,
                                        pixman_image_t *mask,
                                        int32_t x, int32_t y,
                                        int32_t w, int32_t h)
{
    PVDCComposeConvertFn *convert = job->fmt->convert;
    const PVDCComposePlane *plane = job->plane;
    const uint8_t *img = vram + job->img_offset;
    pixman_op_t op = mask ? PIXMAN_OP_OVER : PIXMAN_OP_SRC;
    uint32_t *buf = NULL;
    size_t buf_size = 0;
    int32_t lines = PVDC_COMPOSE_CONVERT_LINES;

    if (!job->transformed && !mask) {
        uint8_t *out = (uint8_t *)pixman_image_get_data(dst);
        int stride = pixman_image_get_stride(dst);

        for (int32_t row = y; row < y + h; row++) {
            convert((uint32_t *)(out + (size_t)stride * row) + x,
                    img + (size_t)plane->pitch * (row + job->dy),
                    x + job->dx, w);
        }
        return;
    }
    if (job->transformed) {
        lines = MAX(1, MIN(PVDC_COMPOSE_CONVERT_LINES,
                           (PVDC_COMPOSE_CONVERT_LINES << 16) /
                           MAX(abs(job->transform.matrix[1][1]), 1)));
    }

    for (int32_t row = 0; row < h; row += lines) {
        int32_t n = MIN(lines, h - row);
        int64_t c0, c1, r0, r1;
        pixman_image_t *tmp;
        size_t size;

        if (job->transformed) {
            const pixman_transform_t *t = &job->transform;

            pvdc_compose_window(t->matrix[0][0], t->matrix[0][2],
                                x - plane->dst_x, x + w - plane->dst_x,
                                job->img_w, &c0, &c1);
            pvdc_compose_window(t->matrix[1][1], t->matrix[1][2],
                                y + row - plane->dst_y,
                                y + row + n - plane->dst_y, job->img_h,
                                &r0, &r1);
        } else {
            c0 = x + job->dx;
            c1 = c0 + w;
            r0 = y + row + job->dy;
            r1 = r0 + n;
        }
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
            convert(buf + (r - r0) * (c1 - c0),
                    img + (size_t)plane->pitch * r, c0, c1 - c0);
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

static pixman_image_t *pvdc_compose_image(const PVDCComposeJob *job,
                                          const uint8_t *vram,
                                          pixman_format_code_t format)
{
    pixman_image_t *img;

    /* Source images are only ever read: the cast drops const for pixman. */
    img = pixman_image_create_bits_no_clear(format, job->img_w, job->img_h,
                                            (uint32_t *)(vram +
                                                         job->img_offset),
                                            job->plane->pitch);
    if (img && job->transformed) {
        pixman_image_set_transform(img, &job->transform);
        pixman_image_set_filter(img, job->filter, NULL, 0);
        pixman_image_set_repeat(img, PIXMAN_REPEAT_PAD);
    }
    return img;
}

/* Draw the part [x, x + w) x [y, y + h) of @job's visible rectangle. */
static void pvdc_compose_draw(const PVDCComposeJob *job, const uint8_t *vram,
                              pixman_image_t *dst, int32_t x, int32_t y,
                              int32_t w, int32_t h)
{
    pixman_image_t *color = NULL, *alpha = NULL, *mask = NULL, *tmp;
    int32_t sx, sy;

    if (job->transformed) {
        sx = x - job->plane->dst_x;
        sy = y - job->plane->dst_y;
    } else {
        sx = x + job->dx;
        sy = y + job->dy;
    }

    if (job->alpha < 255) {
        pixman_color_t pa = { .alpha = job->alpha * 0x101 };

        mask = pixman_image_create_solid_fill(&pa);
        if (!mask) {
            return;
        }
    }
    if (job->fmt->convert) {
        pvdc_compose_draw_converted(job, vram, dst, mask, x, y, w, h);
        goto out;
    }
    color = pvdc_compose_image(job, vram, job->fmt->color);
    if (job->pixel_alpha) {
        alpha = pvdc_compose_image(job, vram, job->fmt->alpha);
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

        if (job->visible && x0 < x1 && y0 < y1) {
            pvdc_compose_draw(job, vram, dst, x0, y0, x1 - x0, y1 - y0);
        }
    }
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

    if (!pvdc_compose_prepare_scene(scene, vram_size, jobs, order)) {
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
    if (!shown || shown->transformed || shown->alpha != 255 ||
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
    /* what QEMU's display surfaces can describe */
    format = shown->fmt->color;
    if (shown->fmt->convert) {
        return false;
    }
    if (format != PIXMAN_LE_x8r8g8b8 && format != PIXMAN_LE_x8b8g8r8 &&
        format != PVDC_LE_r5g6b5) {
        return false;
    }

    plane = shown->plane;
    direct->format = format;
    direct->stride = plane->pitch;
    direct->offset = shown->img_offset + (uint64_t)plane->pitch * shown->dy +
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

bool pvdc_compose_plane_source(const PVDCComposePlane *plane,
                               uint64_t *offset, uint64_t *row_bytes,
                               uint32_t *rows)
{
    PVDCComposeJob job;

    if (!pvdc_compose_prepare(&job, plane, PVDC_COMPOSE_MAX_SIZE,
                              PVDC_COMPOSE_MAX_SIZE, UINT64_MAX)) {
        return false;
    }
    *offset = job.img_offset;
    *row_bytes = (uint64_t)job.img_w * job.fmt->cpp;
    *rows = job.img_h;
    return true;
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

bool pvdc_compose_plane_damage(const PVDCComposePlane *plane, uint32_t width,
                               uint32_t height, uint64_t start, uint64_t len,
                               QemuRect *rect)
{
    PVDCComposeJob job;
    uint64_t fb_end, end, first, last;
    int64_t x0, x1, y0, y1, pad;

    qemu_rect_init(rect, 0, 0, 0, 0);
    if (!len || !pvdc_compose_size_ok(width) ||
        !pvdc_compose_size_ok(height) ||
        !pvdc_compose_prepare(&job, plane, width, height, UINT64_MAX) ||
        !job.visible) {
        return false;
    }

    /* the written bytes inside the framebuffer, relative to its start */
    fb_end = (uint64_t)plane->pitch * (plane->fb_height - 1) +
             (uint64_t)plane->fb_width * job.fmt->cpp;
    end = len > UINT64_MAX - start ? UINT64_MAX : start + len;
    if (end <= plane->offset) {
        return false;
    }
    first = start > plane->offset ? start - plane->offset : 0;
    last = MIN(end - plane->offset, fb_end) - 1;
    if (first > last) {
        return false;
    }

    y0 = first / plane->pitch;
    y1 = last / plane->pitch + 1;
    x0 = 0;
    x1 = plane->fb_width;
    if (y1 - y0 == 1) {
        x0 = first % plane->pitch / job.fmt->cpp;
        x1 = MIN(last % plane->pitch / job.fmt->cpp + 1, x1);
        if (x0 >= x1) {
            return false;       /* only the padding at the end of a line */
        }
    }
    if (plane->format == PVDC_FMT_YUYV) {
        x0 = ROUND_DOWN(x0, 2);
        x1 = ROUND_UP(x1, 2);
    }

    /* Transformed planes may sample one pixel further (rounding, filter). */
    pad = job.transformed ? 1 : 0;
    pvdc_compose_map_axis(&x0, &x1, plane->src_x, plane->src_w, plane->dst_w,
                          job.transform.matrix[0][0] < 0, pad);
    pvdc_compose_map_axis(&y0, &y1, plane->src_y, plane->src_h, plane->dst_h,
                          job.transform.matrix[1][1] < 0, pad);
    x0 = MAX(x0 + plane->dst_x, job.x0);
    x1 = MIN(x1 + plane->dst_x, job.x1);
    y0 = MAX(y0 + plane->dst_y, job.y0);
    y1 = MIN(y1 + plane->dst_y, job.y1);
    pvdc_compose_rect_set(rect, x0, y0, x1, y1);
    return x0 < x1 && y0 < y1;
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
