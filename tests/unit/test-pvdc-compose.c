/*
 * pvdc: check the composition engine against a per-pixel reference.
 *
 * A unit test, standalone (tests/unit/Makefile builds it against the QEMU
 * headers and links the engine, hw/display/pvdc-compose*.c, directly):
 * every case composes a scene with pvdc_compose() and with the
 * straightforward model below, which reads framebuffers one pixel at a
 * time and applies the rules of docs/specs/pvdc.rst ("Composition")
 * literally, and compares the two frames.  The model shares no code with
 * the engine and derives what it can another way: YCbCr coefficients by
 * inverting the encoding matrix numerically, chroma by generic bilinear
 * weights, the colour matrix in 128-bit integers.
 *
 * Everything the spec defines exactly is compared exactly: format
 * conversion, nearest sampling, blending in 8-bit arithmetic, the colour
 * pipeline.  Bilinear filtering is pixman's, with 7-bit weights, so it is
 * compared within a tolerance; the colour pipeline applied to such a
 * frame is still compared exactly, against the model's pipeline run on
 * the engine's own frame without it.  A nearest sample that falls within
 * the rounding of the 16.16 scale factor of a pixel boundary may take
 * either pixel; those pixels are counted, not compared.
 *
 * VRAM is mapped between two inaccessible pages and framebuffers (the
 * chroma plane of two-plane formats last) are placed flush against its
 * end, so a read past VRAM by pixman or the engine faults.
 *
 * Output is TAP; the exit status is non-zero if any case fails.
 *
 * Copyright (c) 2026 The pvdc authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include <math.h>
#include <sys/mman.h>
#include <zlib.h>
#include "qemu/bswap.h"
#include "pvdc-compose.h"
#include "../qtest/pvdc-color-ref.h"

#define VRAM_SIZE       (16 * 1024 * 1024)
#define MIB             (1024 * 1024)

static uint8_t *vram;
/* pixels whose nearest sample sits on a pixel boundary, either side is right */
static uint8_t *ref_ambiguous;
static uint64_t ambiguous_total, compared_total, scenes_total;
/* the largest difference seen where a tolerance applied */
static int tolerated_max;
static bool quiet;
static unsigned int tests_run, tests_failed;
static GRand *rng;

/* ------------------------------------------------------------------ */
/* Formats                                                             */
/* ------------------------------------------------------------------ */

typedef struct RefFormat {
    uint32_t fourcc;
    const char *name;
    unsigned int cpp;           /* bytes per pixel of the (Y) plane */
    unsigned int chroma_cpp;    /* bytes per Cb:Cr sample, 0 if one plane */
    unsigned int depth;         /* bits per YCbCr component, 0 for RGB */
    bool alpha;
} RefFormat;

static const RefFormat formats[] = {
    { .fourcc = PVDC_FMT_XRGB8888, .name = "XRGB8888", .cpp = 4 },
    { .fourcc = PVDC_FMT_ARGB8888, .name = "ARGB8888", .cpp = 4,
      .alpha = true },
    { .fourcc = PVDC_FMT_XBGR8888, .name = "XBGR8888", .cpp = 4 },
    { .fourcc = PVDC_FMT_ABGR8888, .name = "ABGR8888", .cpp = 4,
      .alpha = true },
    { .fourcc = PVDC_FMT_RGB565, .name = "RGB565", .cpp = 2 },
    { .fourcc = PVDC_FMT_XRGB2101010, .name = "XRGB2101010", .cpp = 4 },
    { .fourcc = PVDC_FMT_YUYV, .name = "YUYV", .cpp = 2, .depth = 8 },
    { .fourcc = PVDC_FMT_NV12, .name = "NV12", .cpp = 1, .chroma_cpp = 2,
      .depth = 8 },
    { .fourcc = PVDC_FMT_P010, .name = "P010", .cpp = 2, .chroma_cpp = 4,
      .depth = 10 },
};
#define NUM_FORMATS ARRAY_SIZE(formats)

static const RefFormat *ref_format(uint32_t fourcc)
{
    for (size_t i = 0; i < NUM_FORMATS; i++) {
        if (formats[i].fourcc == fourcc) {
            return &formats[i];
        }
    }
    g_assert_not_reached();
}

static const char *blend_names[] = { "none", "premultiplied", "coverage" };
static const char *encoding_names[] = { "BT.601", "BT.709", "BT.2020" };
static const char *range_names[] = { "limited", "full" };

/* ------------------------------------------------------------------ */
/* Reference model: YCbCr                                              */
/* ------------------------------------------------------------------ */

typedef struct RefYuv {
    int64_t y_off, c_off, y, r_v, g_u, g_v, b_u;
} RefYuv;

static void ref_invert3(const double m[3][3], double inv[3][3])
{
    double det = m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) -
                 m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) +
                 m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);

    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 3; j++) {
            /* cofactor of m[j][i] */
            int r0 = (j + 1) % 3, r1 = (j + 2) % 3;
            int c0 = (i + 1) % 3, c1 = (i + 2) % 3;

            inv[i][j] = (m[r0][c0] * m[r1][c1] - m[r0][c1] * m[r1][c0]) / det;
        }
    }
}

/* far below the precision of 16.16, far above that of a double */
#define REF_EPS         (1.0 / (1 << 30))

static int64_t ref_fixed16(double v)
{
    return (int64_t)floor(v * 65536 + 0.5);
}

/*
 * The spec's coefficients, derived from the forward matrix (R'G'B' to
 * E'Y E'Cb E'Cr) of the encoding by inverting it.
 */
static void ref_yuv_derive(unsigned int encoding, unsigned int range,
                           unsigned int depth, RefYuv *k)
{
    static const double krkb[3][2] = {
        { 0.299, 0.114 }, { 0.2126, 0.0722 }, { 0.2627, 0.0593 },
    };
    double kr = krkb[encoding][0], kb = krkb[encoding][1];
    double kg = 1 - kr - kb;
    double m[3][3] = {
        { kr, kg, kb },
        { -kr / (2 * (1 - kb)), -kg / (2 * (1 - kb)), 0.5 },
        { 0.5, -kg / (2 * (1 - kr)), -kb / (2 * (1 - kr)) },
    };
    double inv[3][3];
    bool full = range == PVDC_COMPOSE_RANGE_FULL;
    double ys = full ? (1 << depth) - 1 : 219 << (depth - 8);
    double cs = full ? (1 << depth) - 1 : 224 << (depth - 8);

    ref_invert3(m, inv);
    /* R' = E'Y + a E'Cr, B' = E'Y + b E'Cb: the structure the spec uses */
    for (int i = 0; i < 3; i++) {
        g_assert(fabs(inv[i][0] - 1) < REF_EPS);
    }
    g_assert(fabs(inv[0][1]) < REF_EPS && fabs(inv[2][2]) < REF_EPS);

    k->y_off = full ? 0 : 16 << (depth - 8);
    k->c_off = 1 << (depth - 1);
    k->y = ref_fixed16(255 / ys);
    k->r_v = ref_fixed16(255 * inv[0][2] / cs);
    k->g_u = ref_fixed16(-255 * inv[1][1] / cs);
    k->g_v = ref_fixed16(-255 * inv[1][2] / cs);
    k->b_u = ref_fixed16(255 * inv[2][1] / cs);
}

/* ref_yuv_derive(), once per combination (it runs for every pixel) */
static void ref_yuv(unsigned int encoding, unsigned int range,
                    unsigned int depth, RefYuv *k)
{
    static RefYuv cache[3][2][2];
    static bool cached[3][2][2];
    int d = depth == 10;

    if (!cached[encoding][range][d]) {
        ref_yuv_derive(encoding, range, depth, &cache[encoding][range][d]);
        cached[encoding][range][d] = true;
    }
    *k = cache[encoding][range][d];
}

static int64_t ref_floor_div(int64_t n, int64_t d)
{
    return n >= 0 ? n / d : -((-n + d - 1) / d);
}

static int ref_clamp8(int64_t v)
{
    return v < 0 ? 0 : v > 255 ? 255 : v;
}

/* Luma @y and chroma @u8, @v8 in eighths to R'G'B', as the spec says. */
static void ref_yuv_to_rgb(const RefYuv *k, int y, int u8, int v8, int c[4])
{
    int64_t l = k->y * 8 * (y - k->y_off) + (1 << 18);
    int64_t u = u8 - 8 * k->c_off, v = v8 - 8 * k->c_off;

    c[0] = ref_clamp8(ref_floor_div(l + k->r_v * v, 1 << 19));
    c[1] = ref_clamp8(ref_floor_div(l - k->g_u * u - k->g_v * v, 1 << 19));
    c[2] = ref_clamp8(ref_floor_div(l + k->b_u * u, 1 << 19));
    c[3] = 255;
}

static int ref_clampi(int v, int lo, int hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* The framebuffer pixels of the source rectangle rounded out, inclusive. */
static void ref_window(const PVDCComposePlane *p, int *lx, int *hx, int *ly,
                       int *hy)
{
    *lx = p->src_x >> 16;
    *ly = p->src_y >> 16;
    *hx = DIV_ROUND_UP((uint64_t)p->src_x + p->src_w, 65536) - 1;
    *hy = DIV_ROUND_UP((uint64_t)p->src_y + p->src_h, 65536) - 1;
}

/* Cb (@which 0) or Cr of chroma sample (j, k), as stored. */
static int ref_chroma_sample(const PVDCComposePlane *p, const RefFormat *f,
                             int j, int k, int which)
{
    const uint8_t *row = vram + p->chroma_offset +
                         (uint64_t)p->chroma_pitch * k;

    return f->chroma_cpp == 4 ? lduw_le_p(row + j * 4 + which * 2) >> 6 :
           row[j * 2 + which];
}

/*
 * The chroma of pixel (x, y) of a two-plane format, in eighths: sample
 * (j, k) sits at luma position (2j, 2k + 1/2) (MPEG-2 siting) and is
 * interpolated bilinearly, indices clamped to the samples of the source
 * rectangle.
 */
static void ref_chroma(const PVDCComposePlane *p, const RefFormat *f, int x,
                       int y, int *u8, int *v8)
{
    int lx, hx, ly, hy;
    double cx = x / 2.0, cy = (y - 0.5) / 2.0, u = 0, v = 0;
    int j0 = floor(cx), k0 = floor(cy);
    double fx = cx - j0, fy = cy - k0;

    ref_window(p, &lx, &hx, &ly, &hy);
    for (int dj = 0; dj < 2; dj++) {
        for (int dk = 0; dk < 2; dk++) {
            double w = (dj ? fx : 1 - fx) * (dk ? fy : 1 - fy);
            int j = ref_clampi(j0 + dj, lx / 2, hx / 2);
            int k = ref_clampi(k0 + dk, ly / 2, hy / 2);

            u += w * ref_chroma_sample(p, f, j, k, 0);
            v += w * ref_chroma_sample(p, f, j, k, 1);
        }
    }
    *u8 = lround(u * 8);
    *v8 = lround(v * 8);
}

/* ------------------------------------------------------------------ */
/* Reference model: sampling and blending                              */
/* ------------------------------------------------------------------ */

/* One framebuffer pixel as r, g, b, a in 0..255, as the spec reads it. */
static void ref_fetch(const PVDCComposePlane *p, int x, int y, int c[4])
{
    const RefFormat *f = ref_format(p->format);
    const uint8_t *row = vram + p->offset + (uint64_t)p->pitch * y;
    RefYuv k;
    uint32_t w;

    c[3] = 255;
    switch (p->format) {
    case PVDC_FMT_XRGB8888:
    case PVDC_FMT_ARGB8888:
        w = ldl_le_p(row + x * 4);
        c[0] = (w >> 16) & 0xff;
        c[1] = (w >> 8) & 0xff;
        c[2] = w & 0xff;
        if (p->format == PVDC_FMT_ARGB8888) {
            c[3] = w >> 24;
        }
        break;
    case PVDC_FMT_XBGR8888:
    case PVDC_FMT_ABGR8888:
        w = ldl_le_p(row + x * 4);
        c[0] = w & 0xff;
        c[1] = (w >> 8) & 0xff;
        c[2] = (w >> 16) & 0xff;
        if (p->format == PVDC_FMT_ABGR8888) {
            c[3] = w >> 24;
        }
        break;
    case PVDC_FMT_RGB565:
        w = lduw_le_p(row + x * 2);
        c[0] = ((w >> 11) << 3) | (w >> 13);
        c[1] = (((w >> 5) & 0x3f) << 2) | ((w >> 9) & 3);
        c[2] = ((w & 0x1f) << 3) | ((w >> 2) & 7);
        break;
    case PVDC_FMT_XRGB2101010:
        w = ldl_le_p(row + x * 4);
        c[0] = (w >> 22) & 0xff;
        c[1] = (w >> 12) & 0xff;
        c[2] = (w >> 2) & 0xff;
        break;
    case PVDC_FMT_YUYV: {
        /* a pixel takes the chroma of its macropixel */
        const uint8_t *m = row + (x & ~1) * 2;

        ref_yuv(p->encoding, p->range, 8, &k);
        ref_yuv_to_rgb(&k, row[x * 2], 8 * m[1], 8 * m[3], c);
        break;
    }
    case PVDC_FMT_NV12:
    case PVDC_FMT_P010: {
        int u8, v8, luma = f->cpp == 2 ? lduw_le_p(row + x * 2) >> 6 : row[x];

        ref_yuv(p->encoding, p->range, f->depth, &k);
        ref_chroma(p, f, x, y, &u8, &v8);
        ref_yuv_to_rgb(&k, luma, u8, v8, c);
        break;
    }
    default:
        g_assert_not_reached();
    }
}

/*
 * Framebuffer coordinate sampled for destination offset d (pixel centre
 * d + 0.5) along one axis.  The scale factor is src / dst rounded to
 * 16.16 (at least 1/65536), as the spec says; the rest is exact.
 */
static double ref_coord(uint32_t src, uint32_t src_size, uint32_t dst_size,
                        bool flip, int d)
{
    double scale = MAX(1, ((uint64_t)src_size + dst_size / 2) / dst_size);
    double t = (d + 0.5) * scale;

    return (flip ? src + (double)src_size - t : src + t) / 65536;
}

/* Sample @p for destination offset (dx, dy); false if ambiguous. */
static bool ref_sample(const PVDCComposePlane *p, int dx, int dy,
                       double c[4])
{
    bool rot = p->ctrl & PVDC_PS_CTRL_ROTATE_180;
    bool fx = !!(p->ctrl & PVDC_PS_CTRL_REFLECT_X) ^ rot;
    bool fy = !!(p->ctrl & PVDC_PS_CTRL_REFLECT_Y) ^ rot;
    double u = ref_coord(p->src_x, p->src_w, p->dst_w, fx, dx);
    double v = ref_coord(p->src_y, p->src_h, p->dst_h, fy, dy);
    int lx, hx, ly, hy, q[4][4];
    /* pixman's rounding only matters where the scale is not exact */
    const double ex = p->src_w % p->dst_w ? 2.0 / 65536 : 0;
    const double ey = p->src_h % p->dst_h ? 2.0 / 65536 : 0;

    ref_window(p, &lx, &hx, &ly, &hy);
    if (!(p->ctrl & PVDC_PS_CTRL_FILTER_BILINEAR)) {
        /* the pixel under the sample, exact boundaries to the one before */
        int x = ref_clampi((int)ceil(u) - 1, lx, hx);
        int y = ref_clampi((int)ceil(v) - 1, ly, hy);

        ref_fetch(p, x, y, q[0]);
        for (int i = 0; i < 4; i++) {
            c[i] = q[0][i];
        }
        return x == ref_clampi((int)ceil(u - ex) - 1, lx, hx) &&
               x == ref_clampi((int)ceil(u + ex) - 1, lx, hx) &&
               y == ref_clampi((int)ceil(v - ey) - 1, ly, hy) &&
               y == ref_clampi((int)ceil(v + ey) - 1, ly, hy);
    }

    u -= 0.5;
    v -= 0.5;
    {
        int x0 = floor(u), y0 = floor(v);
        double wx = u - x0, wy = v - y0;
        int xs[2] = { ref_clampi(x0, lx, hx), ref_clampi(x0 + 1, lx, hx) };
        int ys[2] = { ref_clampi(y0, ly, hy), ref_clampi(y0 + 1, ly, hy) };

        ref_fetch(p, xs[0], ys[0], q[0]);
        ref_fetch(p, xs[1], ys[0], q[1]);
        ref_fetch(p, xs[0], ys[1], q[2]);
        ref_fetch(p, xs[1], ys[1], q[3]);
        for (int i = 0; i < 4; i++) {
            c[i] = (1 - wy) * ((1 - wx) * q[0][i] + wx * q[1][i]) +
                   wy * ((1 - wx) * q[2][i] + wx * q[3][i]);
        }
    }
    return true;
}

/* x * y in 8-bit arithmetic: x * y / 255 rounded to nearest (no ties). */
static int ref_mul(int x, int y)
{
    return (x * y + 127) / 255;
}

/*
 * One channel of the DRM blend equations in 8-bit arithmetic, as the
 * spec states them, with "1 - a" = 255 - a and the sum saturating.
 */
static int ref_blend(unsigned int blend, int pa, int fg, int fa, int bg)
{
    int out;

    switch (blend) {
    case PVDC_BLEND_NONE:
        out = ref_mul(pa, fg) + ref_mul(255 - pa, bg);
        break;
    case PVDC_BLEND_PREMULTI:
        out = ref_mul(pa, fg) + ref_mul(255 - ref_mul(pa, fa), bg);
        break;
    default:
        out = ref_mul(pa, ref_mul(fa, fg)) + ref_mul(255 - ref_mul(pa, fa), bg);
        break;
    }
    return MIN(out, 255);
}

/* The whole frame, planes in zpos order, without colour pipeline. */
static void ref_compose(const PVDCComposeScene *s, uint32_t *frame)
{
    unsigned int order[PVDC_MAX_PLANES_PER_HEAD];
    size_t n = (size_t)s->width * s->height;

    for (unsigned int i = 0; i < s->num_planes; i++) {
        unsigned int j = i;

        while (j > 0 && s->planes[order[j - 1]].zpos > s->planes[i].zpos) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = i;
    }
    for (size_t i = 0; i < n; i++) {
        frame[i] = s->background & 0xffffff;
    }
    g_free(ref_ambiguous);
    ref_ambiguous = g_new0(uint8_t, n);
    for (unsigned int k = 0; k < s->num_planes; k++) {
        const PVDCComposePlane *p = &s->planes[order[k]];
        unsigned int blend = (p->ctrl >> PVDC_PS_CTRL_BLEND_SHIFT) & 3;
        int pa = (p->alpha * 255 + 32767) / 65535;
        bool pixel_alpha = ref_format(p->format)->alpha &&
                           blend != PVDC_BLEND_NONE;

        if (!pa) {
            continue;
        }
        for (int y = MAX(p->dst_y, 0);
             y < MIN((int64_t)p->dst_y + p->dst_h, (int64_t)s->height); y++) {
            for (int x = MAX(p->dst_x, 0);
                 x < MIN((int64_t)p->dst_x + p->dst_w, (int64_t)s->width);
                 x++) {
                uint32_t *px = &frame[(size_t)y * s->width + x];
                double c[4];
                int fa, out[3];

                if (!ref_sample(p, x - p->dst_x, y - p->dst_y, c)) {
                    ref_ambiguous[(size_t)y * s->width + x] = 1;
                }
                fa = pixel_alpha ? lround(c[3]) : 255;
                for (int i = 0; i < 3; i++) {
                    out[i] = ref_blend(pixel_alpha ? blend : PVDC_BLEND_NONE,
                                       pa, lround(c[i]), fa,
                                       (*px >> (16 - 8 * i)) & 0xff);
                }
                *px = out[0] << 16 | out[1] << 8 | out[2];
            }
        }
    }
}

/* ------------------------------------------------------------------ */
/* Reference model: colour pipeline                                    */
/* ------------------------------------------------------------------ */

/* The model is tests/qtest/pvdc-color-ref.h, shared with the qtests. */
QEMU_BUILD_BUG_ON(sizeof(PVDCComposeLutEntry) != 4 * sizeof(uint16_t));

static void ref_color(const PVDCComposeColorDesc *d, const uint32_t *in,
                      uint32_t *out, size_t n)
{
    RefColorDesc ref = {
        .degamma = (const uint16_t *)d->degamma,
        .degamma_size = d->degamma_size,
        .ctm = d->ctm,
        .gamma = (const uint16_t *)d->gamma,
        .gamma_size = d->gamma_size,
    };

    for (size_t i = 0; i < n; i++) {
        out[i] = ref_color_pixel(&ref, in[i] & 0xffffff);
    }
}

/* CRC-32 of a frame as the spec defines it, from the model's pixels. */
static uint32_t ref_crc(const uint32_t *frame, uint32_t w, uint32_t h)
{
    uint32_t crc = crc32(0, NULL, 0);

    for (size_t i = 0; i < (size_t)w * h; i++) {
        uint8_t b[4] = { frame[i], frame[i] >> 8, frame[i] >> 16, 0 };

        crc = crc32(crc, b, 4);
    }
    return crc;
}

/* ------------------------------------------------------------------ */
/* Helpers                                                             */
/* ------------------------------------------------------------------ */

static void vram_init(void)
{
    size_t page = qemu_real_host_page_size();
    uint8_t *map = mmap(NULL, VRAM_SIZE + 2 * page, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

    g_assert(map != MAP_FAILED);
    g_assert(mprotect(map, page, PROT_NONE) == 0);
    g_assert(mprotect(map + page + VRAM_SIZE, page, PROT_NONE) == 0);
    vram = map + page;
}

static void fill_random(uint64_t offset, uint64_t len)
{
    for (uint64_t i = 0; i < len; i++) {
        vram[offset + i] = g_rand_int(rng);
    }
}

static uint64_t fb_bytes(uint32_t pitch, uint32_t w, uint32_t h,
                         unsigned int cpp)
{
    return (uint64_t)pitch * (h - 1) + (uint64_t)w * cpp;
}

static uint64_t chroma_bytes(const PVDCComposePlane *p)
{
    const RefFormat *f = ref_format(p->format);

    return fb_bytes(p->chroma_pitch, DIV_ROUND_UP(p->fb_width, 2),
                    DIV_ROUND_UP(p->fb_height, 2), f->chroma_cpp);
}

/*
 * A plane reading a whole @w x @h framebuffer, placed so that its last
 * byte is the last byte of VRAM (minus @gap), filled with random pixels.
 * Two-plane formats get their chroma plane there and the luma plane
 * below it.
 */
static PVDCComposePlane plane_new(uint32_t format, uint32_t w, uint32_t h,
                                  uint32_t pitch_extra, uint64_t gap)
{
    const RefFormat *f = ref_format(format);
    PVDCComposePlane p = {
        .format = format,
        .pitch = ROUND_UP(w * f->cpp, 4) + pitch_extra,
        .fb_width = w,
        .fb_height = h,
        .src_w = w << 16,
        .src_h = h << 16,
        .dst_w = w,
        .dst_h = h,
        .alpha = 0xffff,
    };
    uint64_t top = VRAM_SIZE - gap, bytes;

    if (f->chroma_cpp) {
        p.chroma_pitch = ROUND_UP(DIV_ROUND_UP(w, 2) * f->chroma_cpp, 4) +
                         pitch_extra;
        bytes = chroma_bytes(&p);
        p.chroma_offset = ROUND_DOWN(top - bytes, 4);
        fill_random(p.chroma_offset, bytes);
        top = p.chroma_offset - 64;
    }
    bytes = fb_bytes(p.pitch, w, h, f->cpp);
    p.offset = ROUND_DOWN(top - bytes, 4);
    fill_random(p.offset, bytes);
    return p;
}

/*
 * @p shows its source rectangle at (@sx, @sy), @sw x @sh (16.16 fixed
 * point), at (@dx, @dy), @dw x @dh pixels of the frame.
 */
static void plane_place(PVDCComposePlane *p, uint32_t sx, uint32_t sy,
                        uint32_t sw, uint32_t sh, int32_t dx, int32_t dy,
                        uint32_t dw, uint32_t dh)
{
    p->src_x = sx;
    p->src_y = sy;
    p->src_w = sw;
    p->src_h = sh;
    p->dst_x = dx;
    p->dst_y = dy;
    p->dst_w = dw;
    p->dst_h = dh;
}

/* Put @p's framebuffer at @offset (keeping its content random). */
static void plane_move(PVDCComposePlane *p, uint64_t offset)
{
    p->offset = offset;
    fill_random(offset, (uint64_t)p->pitch * p->fb_height);
}

static void plane_yuv_random(PVDCComposePlane *p)
{
    p->encoding = g_rand_int_range(rng, 0, PVDC_COMPOSE_ENCODING__MAX);
    p->range = g_rand_int_range(rng, 0, PVDC_COMPOSE_RANGE__MAX);
}

static pixman_image_t *frame_new(uint32_t w, uint32_t h)
{
    return pixman_image_create_bits(PIXMAN_x8r8g8b8, w, h, NULL, w * 4);
}

static void frame_fill(pixman_image_t *img, uint32_t value)
{
    uint32_t *d = pixman_image_get_data(img);
    size_t n = (size_t)pixman_image_get_stride(img) / 4 *
               pixman_image_get_height(img);

    for (size_t i = 0; i < n; i++) {
        d[i] = value;
    }
}

static void ok(bool cond, const char *fmt, ...) G_GNUC_PRINTF(2, 3);

static void ok(bool cond, const char *fmt, ...)
{
    va_list ap;

    tests_run++;
    if (!cond) {
        tests_failed++;
    }
    printf("%sok %u - ", cond ? "" : "not ", tests_run);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
}

/*
 * Compare the engine's frame with the reference, channel by channel
 * within @tol; outside @damage the frame must still be @outside.  On
 * failure describe the first differing pixel.  @ambiguous pixels (NULL:
 * none) are not compared.
 */
static bool frames_match(pixman_image_t *img, const uint32_t *ref,
                         const uint8_t *ambiguous, const QemuRect *damage,
                         const uint32_t *outside, int tol)
{
    int w = pixman_image_get_width(img), h = pixman_image_get_height(img);
    const uint32_t *d = pixman_image_get_data(img);
    uint64_t bad = 0;

    for (int y = 0; y < h; y++) {
        for (int x = 0; x < w; x++) {
            size_t i = (size_t)y * w + x;
            uint32_t want = ref[i] & 0xffffff, got = d[i] & 0xffffff;
            bool in = !damage || (x >= damage->x && y >= damage->y &&
                                  x < damage->x + damage->width &&
                                  y < damage->y + damage->height);

            compared_total++;
            if (!in) {
                want = outside[i] & 0xffffff;
            } else if (ambiguous && ambiguous[i]) {
                ambiguous_total++;
                continue;
            }
            for (int c = 0; c < 24; c += 8) {
                int dv = (int)((got >> c) & 0xff) - (int)((want >> c) & 0xff);

                if (in && tol) {
                    tolerated_max = MAX(tolerated_max, abs(dv));
                }
                if (abs(dv) > (in ? tol : 0)) {
                    if (!bad++ && !quiet) {
                        printf("# first mismatch at (%d,%d): got %06x want "
                               "%06x\n", x, y, got, want);
                    }
                    break;
                }
            }
        }
    }
    if (bad && !quiet) {
        printf("# %" PRIu64 " pixel(s) differ\n", bad);
    }
    return !bad;
}

/*
 * Memory of a plane read through PVDCComposePlane.fetch: VRAM as if its
 * pages (of FETCH_PAGE bytes) were scattered in the host, so that only
 * bytes within one page are contiguous.
 */
#define FETCH_PAGE      4096

static const uint8_t *fetch_scattered(void *opaque, uint64_t offset,
                                      uint64_t len, uint8_t *copy)
{
    uint64_t *copied = opaque;

    g_assert(len && offset + len <= VRAM_SIZE);
    if (!copy) {
        return offset / FETCH_PAGE == (offset + len - 1) / FETCH_PAGE ?
               vram + offset : NULL;
    }
    memcpy(copy, vram + offset, len);
    *copied += len;
    return copy;
}

/*
 * @s composed with every plane read through fetch_scattered(): the same
 * frame as @from_vram, pixel for pixel.
 */
static bool check_fetched(const PVDCComposeScene *s,
                          pixman_image_t *from_vram)
{
    PVDCComposeScene f = *s;
    pixman_image_t *img = frame_new(s->width, s->height);
    uint64_t copied = 0;
    bool good;

    for (unsigned int i = 0; i < f.num_planes; i++) {
        PVDCComposePlane *p = &f.planes[i];

        p->fetch = fetch_scattered;
        p->fetch_opaque = &copied;
        p->mem_size = VRAM_SIZE;
        if (ref_format(p->format)->chroma_cpp) {
            p->chroma_fetch = fetch_scattered;
            p->chroma_fetch_opaque = &copied;
            p->chroma_mem_size = VRAM_SIZE;
        }
    }
    frame_fill(img, 0xdeadbeef);
    good = pvdc_compose(&f, vram, VRAM_SIZE, img, NULL);
    /* the X byte is pixman's to choose (its paths differ) */
    for (size_t i = 0; good && i < (size_t)s->width * s->height; i++) {
        uint32_t a = pixman_image_get_data(img)[i] & 0xffffff;
        uint32_t b = pixman_image_get_data(from_vram)[i] & 0xffffff;

        if (a != b) {
            good = false;
            if (!quiet) {
                printf("# (%zu, %zu) is %06x when its planes are fetched, "
                       "%06x from VRAM\n", i % s->width, i / s->width, a, b);
            }
        }
    }
    pixman_image_unref(img);
    return good;
}

/* pixman's bilinear weights have 7 bits: samples may differ this much. */
#define BILINEAR_TOL    5

/*
 * Compose @s (with the colour pipeline @desc, NULL for none) whole and
 * compare with the reference: exactly when every plane is sampled
 * nearest, within BILINEAR_TOL per filtered layer otherwise.  The
 * pipeline is always checked exactly, against the model's pipeline run
 * on the engine's frame without it.
 */
static bool check_scene_color(PVDCComposeScene *s,
                              const PVDCComposeColorDesc *desc)
{
    size_t n = (size_t)s->width * s->height;
    g_autofree uint32_t *ref = g_new(uint32_t, n);
    g_autofree uint32_t *piped = desc ? g_new(uint32_t, n) : NULL;
    g_autoptr(PVDCComposeColor) color = NULL;
    pixman_image_t *img = frame_new(s->width, s->height);
    int tol = 0;
    bool good;

    for (unsigned int i = 0; i < s->num_planes; i++) {
        if (s->planes[i].ctrl & PVDC_PS_CTRL_FILTER_BILINEAR) {
            tol += BILINEAR_TOL;
        }
    }
    scenes_total++;
    frame_fill(img, 0xdeadbeef);
    ref_compose(s, ref);
    s->color = NULL;
    good = pvdc_compose(s, vram, VRAM_SIZE, img, NULL) &&
           frames_match(img, ref, ref_ambiguous, NULL, NULL, tol) &&
           check_fetched(s, img);
    if (desc) {
        ref_color(desc, pixman_image_get_data(img), piped, n);
        color = pvdc_compose_color_new(desc);
        s->color = color;
        frame_fill(img, 0xdeadbeef);
        good &= color && pvdc_compose(s, vram, VRAM_SIZE, img, NULL) &&
                frames_match(img, piped, NULL, NULL, NULL, 0);
        s->color = NULL;
    }
    pixman_image_unref(img);
    return good;
}

static bool check_scene(PVDCComposeScene *s)
{
    return check_scene_color(s, NULL);
}

static const uint32_t flips[] = {
    0, PVDC_PS_CTRL_REFLECT_X, PVDC_PS_CTRL_REFLECT_Y,
    PVDC_PS_CTRL_ROTATE_180,
    PVDC_PS_CTRL_ROTATE_180 | PVDC_PS_CTRL_REFLECT_X,
};

/* ------------------------------------------------------------------ */
/* Formats, geometry                                                   */
/* ------------------------------------------------------------------ */

static void test_formats(void)
{
    for (size_t f = 0; f < NUM_FORMATS; f++) {
        PVDCComposeScene s = {
            .width = 160, .height = 100, .background = 0x203040,
            .num_planes = 1,
        };
        PVDCComposePlane *p = &s.planes[0];

        /* opaque copy, partly off the top-left corner, odd pitch */
        *p = plane_new(formats[f].fourcc, 96, 70, 12, 0);
        p->dst_x = -10;
        p->dst_y = -7;
        ok(check_scene(&s), "%s: unscaled copy, clipped top-left",
           formats[f].name);

        /* partly off the bottom-right, from an integer source offset */
        plane_place(p, 6 << 16, 3 << 16, 80 << 16, 60 << 16, 110, 60, 80, 60);
        ok(check_scene(&s), "%s: source offset, clipped bottom-right",
           formats[f].name);

        /* odd source offset (for 2-byte formats: not 32-bit aligned) */
        p->src_x = 7 << 16;
        p->src_y = 5 << 16;
        p->dst_x = 5;
        p->dst_y = 5;
        ok(check_scene(&s), "%s: odd source offset", formats[f].name);

        /* the same transformed: edge pixels repeat, none from outside */
        p->ctrl = PVDC_PS_CTRL_FILTER_BILINEAR | PVDC_PS_CTRL_REFLECT_X;
        p->dst_w = 120;
        p->dst_h = 90;
        ok(check_scene(&s), "%s: odd source offset, reflected, bilinear 1.5x",
           formats[f].name);
    }
}

/*
 * Every format, rotation and reflection, both filters, at ratios from
 * 1/4 to 32x with the destination overhanging all four edges of the
 * head, opaque and translucent.
 */
static void test_scaling(void)
{
    static const struct {
        uint32_t sw, sh, dw, dh;
    } sizes[] = {
        { 40, 30, 80, 60 },     /* 2x up */
        { 80, 60, 40, 30 },     /* 2x down */
        { 40, 32, 60, 48 },     /* 1.5x up */
        { 64, 48, 48, 36 },     /* 0.75x */
        { 128, 96, 32, 24 },    /* 4x down, the least the device allows */
        { 64, 30, 32, 60 },     /* down in x, up in y */
        { 20, 20, 400, 300 },   /* 20x, 15x: no upscale limit */
        { 7, 5, 333, 251 },     /* inexact 16.16 factors */
        { 1, 1, 200, 150 },     /* one pixel */
        { 3, 2, 161, 117 },
    };
    unsigned int cases = 0, failed = 0;

    for (size_t f = 0; f < NUM_FORMATS; f++) {
        for (size_t i = 0; i < ARRAY_SIZE(sizes); i++) {
            for (size_t t = 0; t < ARRAY_SIZE(flips); t++) {
                for (int bilinear = 0; bilinear < 2; bilinear++) {
                    /* the destination overhangs the head on every side */
                    PVDCComposeScene s = {
                        .width = MAX(1, sizes[i].dw - 7),
                        .height = MAX(1, sizes[i].dh - 5),
                        .background = 0x405060, .num_planes = 1,
                    };
                    PVDCComposePlane *p = &s.planes[0];
                    bool good;

                    /* YUYV framebuffers have an even width */
                    *p = plane_new(formats[f].fourcc,
                                   ROUND_UP(sizes[i].sw + 6, 2),
                                   sizes[i].sh + 4, 4, 0);
                    plane_yuv_random(p);
                    plane_place(p, 3 << 16, 1 << 16, sizes[i].sw << 16,
                                sizes[i].sh << 16, -3, -2, sizes[i].dw,
                                sizes[i].dh);
                    p->alpha = (i + t) % 2 ? 0xffff : 0x9000;
                    p->ctrl = flips[t] |
                              (bilinear ? PVDC_PS_CTRL_FILTER_BILINEAR : 0) |
                              PVDC_BLEND_PREMULTI << PVDC_PS_CTRL_BLEND_SHIFT;
                    quiet = failed > 0;
                    good = check_scene(&s);
                    quiet = false;
                    if (!good && !failed++) {
                        printf("# failed: %s %ux%u -> %ux%u ctrl 0x%x\n",
                               formats[f].name, sizes[i].sw, sizes[i].sh,
                               p->dst_w, p->dst_h, p->ctrl);
                    }
                    cases++;
                }
            }
        }
        ok(!failed, "%s: %u scalings from 1/4 to 200x, every rotation and "
           "reflection, nearest and bilinear, clipped at every edge",
           formats[f].name, cases);
        cases = failed = 0;
    }
}

/*
 * A 20x20 source fills the largest heads: 4096x4096, and 16384 wide (a
 * band of it at the top and at the bottom of a 16384x16384 destination),
 * and so does a 1x1 source.
 */
static void test_large_upscale(void)
{
    static const struct {
        uint32_t sw, sh, width, height;
    } bands[] = {
        { 20, 20, 16384, 12 },
        { 20, 20, 16000, 12 },  /* no power of 2: the factor is rounded */
        { 1, 1, 16384, 4 },
    };

    for (int nv = 0; nv < 2; nv++) {
        PVDCComposeScene s = {
            .width = 4096, .height = 4096, .background = 0x102030,
            .num_planes = 1,
        };
        PVDCComposePlane *p = &s.planes[0];

        *p = plane_new(nv ? PVDC_FMT_NV12 : PVDC_FMT_ARGB8888, 20, 20, 0, 0);
        p->dst_w = 4096;
        p->dst_h = 4096;
        p->ctrl = nv ? PVDC_PS_CTRL_FILTER_BILINEAR | PVDC_PS_CTRL_ROTATE_180 :
                  PVDC_BLEND_COVERAGE << PVDC_PS_CTRL_BLEND_SHIFT;
        ok(check_scene(&s), "%s 20x20 fills a 4096x4096 head, %s",
           ref_format(p->format)->name, nv ? "bilinear, rotated" : "nearest");
    }

    for (size_t f = 0; f < NUM_FORMATS; f++) {
        unsigned int cases = 0;
        bool good = true;

        for (size_t b = 0; b < ARRAY_SIZE(bands); b++) {
            for (int bottom = 0; bottom < 2; bottom++) {
                for (int bilinear = 0; bilinear < 2; bilinear++) {
                    PVDCComposeScene s = {
                        .width = bands[b].width, .height = bands[b].height,
                        .background = 0x405060, .num_planes = 1,
                    };
                    PVDCComposePlane *p = &s.planes[0];

                    /* YUYV framebuffers have an even width */
                    *p = plane_new(formats[f].fourcc,
                                   ROUND_UP(bands[b].sw, 2), bands[b].sh, 0, 0);
                    plane_yuv_random(p);
                    p->src_w = bands[b].sw << 16;
                    p->dst_w = p->dst_h = bands[b].width;
                    p->dst_y = bottom ? (int)bands[b].height - p->dst_h : 0;
                    p->ctrl = (bilinear ? PVDC_PS_CTRL_FILTER_BILINEAR : 0) |
                              (bottom ? PVDC_PS_CTRL_REFLECT_X : 0);
                    good &= check_scene(&s);
                    cases++;
                }
            }
        }
        ok(good, "%s: 20x20 and 1x1 across 16384 and 16000 wide heads, top "
           "and bottom bands (%u cases)", formats[f].name, cases);
    }
}

static void test_transform_unscaled(void)
{
    for (size_t t = 1; t < ARRAY_SIZE(flips); t++) {
        for (int bilinear = 0; bilinear < 2; bilinear++) {
            PVDCComposeScene s = {
                .width = 90, .height = 70, .num_planes = 1,
            };
            PVDCComposePlane *p = &s.planes[0];

            *p = plane_new(PVDC_FMT_XRGB8888, 80, 60, 0, 0);
            p->src_x = 5 << 16;
            p->src_w = 70 << 16;
            p->dst_w = 70;
            p->dst_x = 30;
            p->dst_y = -5;
            p->ctrl = flips[t] |
                      (bilinear ? PVDC_PS_CTRL_FILTER_BILINEAR : 0);
            ok(check_scene(&s), "unscaled, ctrl 0x%x: exact", p->ctrl);
        }
    }
}

static void test_fractional_and_bilinear(void)
{
    PVDCComposeScene s = {
        .width = 120, .height = 90, .background = 0, .num_planes = 1,
    };
    PVDCComposePlane *p = &s.planes[0];

    *p = plane_new(PVDC_FMT_XRGB8888, 64, 48, 0, 0);
    plane_place(p, (10 << 16) | 0x8000, (4 << 16) | 0x4000, 40 << 16,
                30 << 16, 0, 0, 40, 30);
    ok(check_scene(&s), "nearest, fractional source offset");

    p->ctrl = PVDC_PS_CTRL_FILTER_BILINEAR;
    ok(check_scene(&s), "bilinear, fractional source offset");
    p->dst_w = 100;
    p->dst_h = 75;
    p->dst_x = 10;
    ok(check_scene(&s), "bilinear 2.5x up, edges clamped to source");
    p->ctrl |= PVDC_PS_CTRL_ROTATE_180;
    ok(check_scene(&s), "bilinear 2.5x up, rotated 180");
    p->src_w = 64 << 16;
    p->src_x = 0;
    p->dst_w = 16;
    p->dst_h = 12;
    ok(check_scene(&s), "bilinear 4x down");

    /* a source of less than 1/2^17 pixel per destination pixel */
    *p = plane_new(PVDC_FMT_NV12, 64, 48, 0, 0);
    plane_place(p, 9 << 16, 5 << 16, 1, 1, 0, 0, 100, 75);
    ok(check_scene(&s), "a scale below 1/2^17 samples inside the source");

    /* coverage with translucent plane alpha through the strip path */
    *p = plane_new(PVDC_FMT_ARGB8888, 100, 80, 0, 0);
    plane_place(p, 0, 0, 50 << 16, 40 << 16, 0, 0, 100, 80);
    p->alpha = 0x9000;
    p->ctrl = PVDC_BLEND_COVERAGE << PVDC_PS_CTRL_BLEND_SHIFT;
    ok(check_scene(&s), "coverage, alpha 0x9000, 2x nearest, strips");
}

/* ------------------------------------------------------------------ */
/* Blending                                                            */
/* ------------------------------------------------------------------ */

/*
 * Every pixel blend mode and plane alpha 0, mid and opaque, for every
 * format: on an overlay above an opaque primary, and on the primary
 * itself over the background; plain and scaled with a rotation, nearest
 * and bilinear.
 */
static void test_blend(void)
{
    static const uint16_t alphas[] = { 0, 0x8000, 0xffff, 0x1234, 0xff00 };

    for (size_t f = 0; f < NUM_FORMATS; f++) {
        for (int primary = 0; primary < 2; primary++) {
            unsigned int cases = 0, failed = 0;

            for (unsigned int b = 0; b < 3; b++) {
                for (size_t a = 0; a < ARRAY_SIZE(alphas); a++) {
                    for (int var = 0; var < 3; var++) {
                        PVDCComposeScene s = {
                            .width = 64, .height = 48,
                            .background = 0x6080a0, .num_planes = 1,
                        };
                        PVDCComposePlane *p = &s.planes[0];
                        bool good;

                        *p = plane_new(formats[f].fourcc, 40, 30, 0, 0);
                        plane_yuv_random(p);
                        p->dst_x = 30;
                        p->dst_y = 25;
                        if (var) {
                            p->dst_x = -9;
                            p->dst_w = 57;
                            p->dst_h = 41;
                            p->ctrl = var == 1 ? PVDC_PS_CTRL_ROTATE_180 :
                                      PVDC_PS_CTRL_REFLECT_Y |
                                      PVDC_PS_CTRL_FILTER_BILINEAR;
                        }
                        p->alpha = alphas[a];
                        p->ctrl |= b << PVDC_PS_CTRL_BLEND_SHIFT;
                        if (!primary) {
                            s.num_planes = 2;
                            p->zpos = 1;
                            s.planes[1] = plane_new(PVDC_FMT_XRGB8888, 64, 48,
                                                    0, 1 * MIB);
                        }
                        quiet = failed > 0;
                        good = check_scene(&s);
                        quiet = false;
                        if (!good && !failed++) {
                            printf("# failed: blend %s, alpha 0x%x, "
                                   "ctrl 0x%x\n", blend_names[b], alphas[a],
                                   p->ctrl);
                        }
                        cases++;
                    }
                }
            }
            ok(!failed, "%s %s: %u cases of blend mode x plane alpha x "
               "(plain, rotated nearest, reflected bilinear) follow the "
               "DRM equations in 8-bit arithmetic", formats[f].name,
               primary ? "primary over the background" :
               "overlay above the primary", cases);
        }
    }
}

static void test_zpos_and_clipping(void)
{
    PVDCComposeScene s = {
        .width = 100, .height = 80, .background = 0x00ff00,
        .num_planes = 4,
    };

    s.planes[0] = plane_new(PVDC_FMT_ARGB8888, 32, 32, 0, 0);
    s.planes[0].zpos = 3;
    s.planes[0].dst_x = 90;
    s.planes[0].dst_y = 70;
    s.planes[0].ctrl = PVDC_BLEND_PREMULTI << PVDC_PS_CTRL_BLEND_SHIFT;
    s.planes[1] = plane_new(PVDC_FMT_XRGB8888, 100, 80, 0, 1 * MIB);
    s.planes[1].zpos = 0;
    s.planes[2] = plane_new(PVDC_FMT_ABGR8888, 50, 50, 0, 2 * MIB);
    s.planes[2].zpos = 2;
    s.planes[2].dst_x = -20;
    s.planes[2].dst_y = 40;
    s.planes[2].alpha = 0xc000;
    s.planes[2].ctrl = PVDC_BLEND_COVERAGE << PVDC_PS_CTRL_BLEND_SHIFT;
    s.planes[3] = plane_new(PVDC_FMT_NV12, 40, 40, 0, 3 * MIB);
    s.planes[3].zpos = 1;
    s.planes[3].dst_x = 30;
    s.planes[3].dst_y = -30;
    s.planes[3].alpha = 0x7000;
    ok(check_scene(&s), "four planes drawn in zpos order, not array order");

    s.planes[1].dst_x = 200;
    ok(check_scene(&s), "plane wholly off-screen is left out");
    s.planes[1].dst_x = -100;
    s.planes[1].dst_y = -80;
    ok(check_scene(&s), "plane ending at the top-left corner is left out");
    s.planes[1].dst_x = -99;
    s.planes[1].dst_y = -79;
    ok(check_scene(&s), "plane showing one pixel");

    s.num_planes = 0;
    ok(check_scene(&s), "no plane: background only");
}

/* ------------------------------------------------------------------ */
/* YCbCr                                                               */
/* ------------------------------------------------------------------ */

/*
 * Each encoding and range, each YCbCr format, over random samples, then
 * over every 8-bit chroma pair: exact.
 */
static void test_yuv(void)
{
    static const uint32_t fmts[] = {
        PVDC_FMT_YUYV, PVDC_FMT_NV12, PVDC_FMT_P010,
    };
    RefYuv k;

    /* the model's derivation meets YUYV's constants of old */
    ref_yuv(PVDC_COMPOSE_BT601, PVDC_COMPOSE_RANGE_LIMITED, 8, &k);
    ok(k.y == 76309 && k.r_v == 104597 && k.g_u == 25675 && k.g_v == 53279 &&
       k.b_u == 132201, "BT.601 limited range derives YUYV's historical "
       "coefficients");

    for (size_t f = 0; f < ARRAY_SIZE(fmts); f++) {
        for (int e = 0; e < PVDC_COMPOSE_ENCODING__MAX; e++) {
            for (int r = 0; r < PVDC_COMPOSE_RANGE__MAX; r++) {
                PVDCComposeScene s = {
                    .width = 256, .height = 128, .num_planes = 1,
                };
                PVDCComposePlane *p = &s.planes[0];

                *p = plane_new(fmts[f], 256, 128, 0, 0);
                p->encoding = e;
                p->range = r;
                ok(check_scene(&s), "%s %s %s range: exact",
                   ref_format(fmts[f])->name, encoding_names[e],
                   range_names[r]);
            }
        }
    }

    /* a chroma plane holding every (Cb, Cr) pair of 8 bits */
    for (int e = 0; e < PVDC_COMPOSE_ENCODING__MAX; e++) {
        for (int r = 0; r < PVDC_COMPOSE_RANGE__MAX; r++) {
            PVDCComposeScene s = {
                .width = 512, .height = 512, .num_planes = 1,
            };
            PVDCComposePlane *p = &s.planes[0];

            *p = plane_new(PVDC_FMT_NV12, 512, 512, 0, 0);
            for (int j = 0; j < 256; j++) {
                for (int i = 0; i < 256; i++) {
                    vram[p->chroma_offset + j * p->chroma_pitch + i * 2] = i;
                    vram[p->chroma_offset + j * p->chroma_pitch + i * 2 + 1] =
                        j;
                }
            }
            p->encoding = e;
            p->range = r;
            ok(check_scene(&s), "NV12 %s %s range: every pair of 8-bit "
               "chroma samples", encoding_names[e], range_names[r]);
        }
    }

    /*
     * A source rectangle from an even line to an odd column inside the
     * framebuffer: its first line and last column would interpolate with
     * chroma samples outside it, and repeat the edge ones instead.
     */
    for (int wide = 0; wide < 2; wide++) {
        PVDCComposeScene s = {
            .width = 40, .height = 30, .num_planes = 1,
        };
        PVDCComposePlane *p = &s.planes[0];

        *p = plane_new(wide ? PVDC_FMT_P010 : PVDC_FMT_NV12, 64, 48, 0, 0);
        plane_place(p, 4 << 16, 6 << 16, 34 << 16, 25 << 16, 3, 2, 34, 25);
        ok(check_scene(&s), "%s source rectangle inside the framebuffer: "
           "chroma samples outside it are not used",
           ref_format(p->format)->name);
    }

    /*
     * Siting: one chroma sample different from its flat surroundings
     * reaches the pixels 2j - 1 .. 2j + 1 of lines 2k - 1 .. 2k + 2.
     */
    {
        PVDCComposeScene s = {
            .width = 16, .height = 16, .num_planes = 1,
        };
        PVDCComposePlane *p = &s.planes[0];
        pixman_image_t *img = frame_new(16, 16);
        const uint32_t *d = pixman_image_get_data(img);
        bool good = true;

        *p = plane_new(PVDC_FMT_NV12, 16, 16, 0, 0);
        memset(vram + p->offset, 128, fb_bytes(p->pitch, 16, 16, 1));
        memset(vram + p->chroma_offset, 128, chroma_bytes(p));
        vram[p->chroma_offset + 3 * p->chroma_pitch + 4 * 2 + 1] = 255;
        pvdc_compose(&s, vram, VRAM_SIZE, img, NULL);
        for (int y = 0; y < 16; y++) {
            for (int x = 0; x < 16; x++) {
                bool grey = (d[y * 16 + x] & 0xffffff) == 0x828282;
                bool reached = x >= 7 && x <= 9 && y >= 5 && y <= 8;

                good &= grey != reached;
            }
        }
        good &= check_scene(&s);
        pixman_image_unref(img);
        ok(good, "NV12 chroma siting: sample (4, 3) reaches pixels 7..9 of "
           "lines 5..8");
    }
}

/* ------------------------------------------------------------------ */
/* Colour pipeline                                                     */
/* ------------------------------------------------------------------ */

/* A LUT of @n entries: identity (rounded down if @floor) or random. */
static PVDCComposeLutEntry *lut_new(uint32_t n, bool identity, bool floor)
{
    PVDCComposeLutEntry *lut = g_new0(PVDCComposeLutEntry, n);

    for (uint32_t i = 0; i < n; i++) {
        if (identity) {
            uint32_t v = ((uint64_t)i * 0xffff * 2 + (floor ? 0 : n - 1)) /
                         (2 * (n - 1));

            lut[i].red = lut[i].green = lut[i].blue = v;
        } else {
            lut[i].red = g_rand_int(rng);
            lut[i].green = g_rand_int(rng);
            lut[i].blue = g_rand_int(rng);
        }
        lut[i].reserved = g_rand_int(rng);
    }
    return lut;
}

/* S31.32 sign-magnitude. */
static uint64_t ctm_value(double v)
{
    uint64_t mag = llround(fabs(v) * 4294967296.0);

    return v < 0 ? mag | 1ull << 63 : mag;
}

/* A scene with every format sampled nearest: the model is exact on it. */
static void color_scene(PVDCComposeScene *s)
{
    *s = (PVDCComposeScene) {
        .width = 96, .height = 64, .background = 0x0080ff, .num_planes = 3,
    };
    s->planes[0] = plane_new(PVDC_FMT_XRGB8888, 80, 64, 0, 0);
    s->planes[1] = plane_new(PVDC_FMT_NV12, 40, 30, 0, 1 * MIB);
    s->planes[1].zpos = 1;
    s->planes[1].dst_x = 20;
    s->planes[1].dst_y = 10;
    s->planes[1].dst_w = 70;
    s->planes[1].dst_h = 50;
    s->planes[1].encoding = PVDC_COMPOSE_BT709;
    s->planes[2] = plane_new(PVDC_FMT_ARGB8888, 30, 30, 0, 2 * MIB);
    s->planes[2].zpos = 2;
    s->planes[2].dst_x = 70;
    s->planes[2].dst_y = 40;
    s->planes[2].alpha = 0xa000;
    s->planes[2].ctrl = PVDC_BLEND_COVERAGE << PVDC_PS_CTRL_BLEND_SHIFT;
}

static void test_color(void)
{
    static const uint32_t sizes[] = { 2, 3, 17, 33, 256, 257, 1024, 4096 };
    static const uint64_t identity[9] = {
        1ull << 32, 0, 0, 0, 1ull << 32, 0, 0, 0, 1ull << 32,
    };
    PVDCComposeScene s;
    g_autoptr(PVDCComposeColor) color = NULL;
    pixman_image_t *img, *plain;
    bool good;

    color_scene(&s);
    img = frame_new(s.width, s.height);
    plain = frame_new(s.width, s.height);
    pvdc_compose(&s, vram, VRAM_SIZE, plain, NULL);

    /* identity LUTs (rounded and rounded down) and matrix change nothing */
    good = true;
    for (size_t i = 0; i < ARRAY_SIZE(sizes); i++) {
        for (int fl = 0; fl < 2; fl++) {
            g_autofree PVDCComposeLutEntry *de = lut_new(sizes[i], true, fl);
            g_autofree PVDCComposeLutEntry *ga = lut_new(sizes[i], true, !fl);
            PVDCComposeColorDesc desc = {
                .degamma = de, .degamma_size = sizes[i],
                .gamma = ga, .gamma_size = sizes[i],
                .ctm = fl ? identity : NULL,
            };
            g_autoptr(PVDCComposeColor) c = pvdc_compose_color_new(&desc);

            s.color = c;
            good &= c && !pvdc_compose_color_active(c) &&
                    pvdc_compose(&s, vram, VRAM_SIZE, img, NULL) &&
                    !memcmp(pixman_image_get_data(img),
                            pixman_image_get_data(plain),
                            s.width * s.height * 4);
            good &= check_scene_color(&s, &desc);
            s.color = NULL;
        }
    }
    ok(good, "identity LUTs of %zu sizes and the identity matrix give "
       "exactly the input", ARRAY_SIZE(sizes));

    /* known LUTs and matrices, each stage alone and all three */
    for (size_t i = 0; i < ARRAY_SIZE(sizes); i++) {
        g_autofree PVDCComposeLutEntry *de = lut_new(sizes[i], false, false);
        g_autofree PVDCComposeLutEntry *ga =
            lut_new(sizes[(i + 3) % ARRAY_SIZE(sizes)], false, false);
        uint64_t ctm[9];
        PVDCComposeColorDesc desc;

        for (int j = 0; j < 9; j++) {
            ctm[j] = ctm_value(g_rand_double_range(rng, -2, 2));
        }
        desc = (PVDCComposeColorDesc) { .degamma = de,
                                        .degamma_size = sizes[i] };
        ok(check_scene_color(&s, &desc), "DEGAMMA_LUT of %u entries",
           sizes[i]);
        desc = (PVDCComposeColorDesc) {
            .gamma = ga, .gamma_size = sizes[(i + 3) % ARRAY_SIZE(sizes)],
        };
        ok(check_scene_color(&s, &desc), "GAMMA_LUT of %u entries",
           desc.gamma_size);
        desc = (PVDCComposeColorDesc) { .ctm = ctm };
        ok(check_scene_color(&s, &desc), "CTM (random coefficients in "
           "-2..2), case %zu", i);
        desc = (PVDCComposeColorDesc) {
            .degamma = de, .degamma_size = sizes[i], .ctm = ctm,
            .gamma = ga, .gamma_size = sizes[(i + 3) % ARRAY_SIZE(sizes)],
        };
        ok(check_scene_color(&s, &desc), "DEGAMMA_LUT (%u), CTM, GAMMA_LUT "
           "(%u) in that order", sizes[i], desc.gamma_size);
    }

    /*
     * Coefficients are clamped to -2^13 .. 2^13 - 2^-32: on a grey
     * picture these rows give back the input only if the clamp is there,
     * at that value (the sums cancel but for one unit).
     */
    {
        PVDCComposeScene grey = {
            .width = 64, .height = 40, .num_planes = 1,
        };
        uint64_t ctm[9] = {
            ctm_value(9000), ctm_value(-8191), 1ull << 63,
            ctm_value(-9000), ctm_value(8191), ctm_value(2),
            ctm_value(1), 0x7fffffffffffffffull, ctm_value(-20000.5),
        };
        PVDCComposeColorDesc desc = { .ctm = ctm };
        g_autoptr(PVDCComposeColor) c = pvdc_compose_color_new(&desc);
        pixman_image_t *out = frame_new(64, 40);
        const uint32_t *d = pixman_image_get_data(out);
        bool same = true;

        grey.planes[0] = plane_new(PVDC_FMT_XRGB8888, 64, 40, 0, 0);
        for (int i = 0; i < 64 * 40; i++) {
            stl_le_p(vram + grey.planes[0].offset + i * 4,
                     (i % 256) * 0x010101);
        }
        grey.color = c;
        pvdc_compose(&grey, vram, VRAM_SIZE, out, NULL);
        for (int i = 0; i < 64 * 40; i++) {
            same &= (d[i] & 0xffffff) == (i % 256) * 0x010101;
        }
        pixman_image_unref(out);
        grey.color = NULL;
        ok(same && check_scene_color(&grey, &desc), "CTM coefficients "
           "clamp to -2^13..2^13 - 2^-32, negative zero is zero");
    }

    /* bilinear scenes: the pipeline is exact on the engine's own frame */
    {
        g_autofree PVDCComposeLutEntry *de = lut_new(64, false, false);
        uint64_t ctm[9];
        PVDCComposeColorDesc desc = {
            .degamma = de, .degamma_size = 64, .ctm = ctm,
        };

        for (int j = 0; j < 9; j++) {
            ctm[j] = ctm_value(g_rand_double_range(rng, -1.5, 1.5));
        }
        s.planes[1].ctrl = PVDC_PS_CTRL_FILTER_BILINEAR;
        ok(check_scene_color(&s, &desc), "pipeline after bilinear "
           "scaling");
        s.planes[1].ctrl = 0;
    }

    /* damage: only the damaged rectangle goes through the pipeline again */
    {
        g_autofree PVDCComposeLutEntry *ga = lut_new(256, false, false);
        PVDCComposeColorDesc desc = { .gamma = ga, .gamma_size = 256 };
        g_autofree uint32_t *ref = g_new(uint32_t, s.width * s.height);
        g_autofree uint32_t *old = g_new(uint32_t, s.width * s.height);
        QemuRect r = { 17, 9, 40, 30 };

        color = pvdc_compose_color_new(&desc);
        ref_compose(&s, ref);
        ref_color(&desc, ref, ref, s.width * s.height);
        for (int j = 0; j < s.width * s.height; j++) {
            old[j] = g_rand_int(rng) & 0xffffff;
        }
        memcpy(pixman_image_get_data(img), old, s.width * s.height * 4);
        s.color = color;
        ok(pvdc_compose(&s, vram, VRAM_SIZE, img, &r) &&
           frames_match(img, ref, NULL, &r, old, 0),
           "pipeline applied to the damaged rectangle only");

        /* the CRC covers the output after the pipeline */
        pvdc_compose(&s, vram, VRAM_SIZE, img, NULL);
        ok(pvdc_compose_crc32(img) == ref_crc(ref, s.width, s.height) &&
           pvdc_compose_crc32(img) != pvdc_compose_crc32(plain),
           "CRC of a frame through a known GAMMA_LUT is that of the "
           "model's output");
        s.color = NULL;
    }

    /* out-of-range sizes are refused */
    {
        g_autofree PVDCComposeLutEntry *lut = lut_new(4097, false, false);
        PVDCComposeColorDesc bad[] = {
            { .degamma = lut, .degamma_size = 1 },
            { .degamma = lut, .degamma_size = 4097 },
            { .gamma = lut, .gamma_size = 0 },
            { .gamma = lut, .gamma_size = 4097 },
        };
        PVDCComposeColorDesc none = { .degamma_size = 1 };
        g_autoptr(PVDCComposeColor) pass = pvdc_compose_color_new(&none);

        good = true;
        for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
            good &= !pvdc_compose_color_new(&bad[i]);
        }
        ok(good && pass && !pvdc_compose_color_active(pass),
           "LUT sizes outside 2..4096 are refused, absent stages are not");
    }
    pixman_image_unref(img);
    pixman_image_unref(plain);
}

/* ------------------------------------------------------------------ */
/* Damage, rejects, direct scanout, CRC                                */
/* ------------------------------------------------------------------ */

/* Compose with a damage rectangle over an older frame. */
/*
 * A GAMMA_LUT of @n entries of kind @kind: a power curve, a falling line,
 * a rising curve with plateaus (many equal entries), or random (rising
 * and falling at every entry).
 */
static PVDCComposeLutEntry *lut_kind(uint32_t n, int kind)
{
    PVDCComposeLutEntry *lut = lut_new(n, false, false);

    for (uint32_t i = 0; i < n && kind < 3; i++) {
        double x = (double)i / (n - 1);
        uint16_t v = kind == 0 ? lround(pow(x, 2.2) * 0xffff) :
                     kind == 1 ? lround((1 - x) * 0xffff) :
                     lround(floor(x * 7) / 7 * 0xffff);

        lut[i].red = v;
        lut[i].green = kind == 0 ? 0xffff - v : v;
        lut[i].blue = v / 2;
    }
    return lut;
}

/*
 * The gamma tables of a pipeline with a matrix map every 16-bit value.
 * With no DEGAMMA_LUT the input channel c is 257 * c, and with a = 256 /
 * 257 and b = 1 / 257 the rows (a, b, 0), (b, a, 0), (0, b, a) on the
 * pixel (r, g, r) hand each channel's GAMMA_LUT every value 0..65535
 * once over the 256 x 256 pixels (256 * r + g, r + 256 * g, 256 * r + g):
 * the picture holds each table whole, compared with the model value by
 * value.
 */
static void test_color_gamma_tables(void)
{
    static const uint32_t sizes[] = { 2, 3, 17, 256, 257, 1024, 4096 };
    static const char *const kinds[] = {
        "power curve", "falling line", "plateaus", "random",
    };
    const uint64_t a = ctm_value(256.0 / 257), b = ctm_value(1.0 / 257);
    const uint64_t ctm[9] = { a, b, 0, b, a, 0, 0, b, a };
    PVDCComposeScene s = { .width = 256, .height = 256, .num_planes = 1 };
    pixman_image_t *img = frame_new(256, 256);
    uint32_t *in = g_new(uint32_t, 256 * 256), *want = g_new(uint32_t,
                                                              256 * 256);

    s.planes[0] = plane_new(PVDC_FMT_XRGB8888, 256, 256, 0, 0);
    for (uint32_t y = 0; y < 256; y++) {
        for (uint32_t x = 0; x < 256; x++) {
            in[y * 256 + x] = x << 16 | y << 8 | x;
            stl_le_p(vram + s.planes[0].offset + (uint64_t)s.planes[0].pitch *
                     y + x * 4, in[y * 256 + x]);
        }
    }
    for (int k = -1; k < (int)ARRAY_SIZE(kinds); k++) {
        for (size_t i = 0; i < (k < 0 ? 1 : ARRAY_SIZE(sizes)); i++) {
            g_autofree PVDCComposeLutEntry *ga =
                k < 0 ? NULL : lut_kind(sizes[i], k);
            PVDCComposeColorDesc desc = {
                .ctm = ctm, .gamma = ga, .gamma_size = ga ? sizes[i] : 0,
            };
            g_autoptr(PVDCComposeColor) c = pvdc_compose_color_new(&desc);
            const uint32_t *out = pixman_image_get_data(img);
            uint64_t evaluations;
            unsigned int wrong = 0;

            ref_color(&desc, in, want, 256 * 256);
            s.color = c;
            g_assert(pvdc_compose(&s, vram, VRAM_SIZE, img, NULL));
            s.color = NULL;
            for (int j = 0; j < 256 * 256; j++) {
                wrong += (out[j] & 0xffffff) != want[j];
            }
            evaluations = pvdc_compose_color_evaluations(c);
            ok(!wrong && evaluations > 0 && evaluations <= 3 * 65536,
               "GAMMA_LUT after a matrix, %s of %u entries: every 16-bit "
               "value as the model (%u differ), %" PRIu64 " evaluations",
               k < 0 ? "none" : kinds[k], k < 0 ? 0 : sizes[i], wrong,
               evaluations);
            /* a monotone curve costs a staircase of 256 steps a channel */
            if (k >= 0 && k < 3 && sizes[i] >= 256) {
                ok(evaluations < 3 * 65536 / 4, "%s of %u entries: %"
                   PRIu64 " evaluations, not one per value", kinds[k],
                   sizes[i], evaluations);
            }
        }
    }
    pixman_image_unref(img);
    g_free(in);
    g_free(want);
}

static void test_damage(void)
{
    PVDCComposeScene s = {
        .width = 128, .height = 96, .background = 0x112233,
        .num_planes = 3,
    };
    static const QemuRect rects[] = {
        { 10, 20, 30, 15 }, { -5, -5, 20, 20 }, { 100, 80, 100, 100 },
        { 0, 0, 128, 96 }, { 50, 50, 0, 10 }, { 200, 10, 5, 5 },
        { 64, 48, 1, 1 },
    };

    s.planes[0] = plane_new(PVDC_FMT_XRGB8888, 128, 96, 0, 0);
    s.planes[1] = plane_new(PVDC_FMT_YUYV, 64, 40, 0, 1 * MIB);
    s.planes[1].zpos = 1;
    s.planes[1].dst_w = 96;
    s.planes[1].dst_h = 60;
    s.planes[1].dst_x = 20;
    s.planes[1].dst_y = 10;
    s.planes[2] = plane_new(PVDC_FMT_P010, 24, 24, 0, 2 * MIB);
    s.planes[2].zpos = 2;
    s.planes[2].dst_x = 90;
    s.planes[2].dst_y = 70;
    s.planes[2].alpha = 0x8000;

    for (size_t i = 0; i < ARRAY_SIZE(rects); i++) {
        g_autofree uint32_t *ref = g_new(uint32_t, 128 * 96);
        g_autofree uint32_t *old = g_new(uint32_t, 128 * 96);
        pixman_image_t *img = frame_new(128, 96);

        for (int j = 0; j < 128 * 96; j++) {
            old[j] = g_rand_int(rng) & 0xffffff;
        }
        memcpy(pixman_image_get_data(img), old, 128 * 96 * 4);
        ref_compose(&s, ref);
        ok(pvdc_compose(&s, vram, VRAM_SIZE, img, &rects[i]) &&
           frames_match(img, ref, ref_ambiguous, &rects[i], old, 0),
           "damage %d,%d %ux%u: only that part is redrawn", rects[i].x,
           rects[i].y, rects[i].width, rects[i].height);
        pixman_image_unref(img);
    }
}

/* Framebuffers that reach past VRAM, or other broken planes, draw nothing. */
static void test_rejects(void)
{
    PVDCComposeScene s = {
        .width = 64, .height = 64, .num_planes = 2,
    };
    PVDCComposePlane good = plane_new(PVDC_FMT_XRGB8888, 64, 64, 0, 0);
    PVDCComposePlane nv = plane_new(PVDC_FMT_P010, 64, 64, 0, 0);
    pixman_image_t *img = frame_new(64, 64);
    pixman_image_t *small = frame_new(32, 64);
    const uint32_t *d = pixman_image_get_data(img);
    struct {
        const char *what;
        PVDCComposePlane p;
    } bad[32];
    int n = 0;

#define BAD(base, desc, field, value) do {                  \
        bad[n].what = desc;                                 \
        bad[n].p = base;                                    \
        bad[n].p.field = value;                             \
        n++;                                                \
    } while (0)
    BAD(good, "offset past VRAM", offset, VRAM_SIZE + 64);
    BAD(good, "last line one pixel past VRAM", offset, good.offset + 4);
    BAD(good, "offset near 2^64", offset, UINT64_MAX - 63);
    BAD(good, "pitch below width * cpp", pitch, 252);
    BAD(good, "pitch not a multiple of 4", pitch, 258);
    BAD(good, "huge pitch", pitch, 0xffffffc0);
    BAD(good, "source past the fb width", src_x, 1 << 16);
    BAD(good, "source past the fb height", src_h, 65 << 16);
    BAD(good, "empty source", src_w, 0);
    BAD(good, "empty destination", dst_h, 0);
    BAD(good, "destination too far off-screen", dst_x, -100000);
    BAD(good, "unknown format", format, 0x12345678);
    BAD(good, "blend mode 3", ctrl, 3 << PVDC_PS_CTRL_BLEND_SHIFT);
    BAD(good, "fb width 0", fb_width, 0);
    BAD(good, "YUYV with odd width", format, PVDC_FMT_YUYV);
    bad[n - 1].p.fb_width = 63;
    bad[n - 1].p.src_w = 63 << 16;
    BAD(nv, "chroma offset past VRAM", chroma_offset, VRAM_SIZE + 64);
    BAD(nv, "last chroma line one sample past VRAM", chroma_offset,
        nv.chroma_offset + 4);
    BAD(nv, "chroma offset near 2^64", chroma_offset, UINT64_MAX - 63);
    BAD(nv, "chroma pitch below the chroma width", chroma_pitch, 124);
    /* 65 pixels need 33 samples: a pitch of 32 samples is one short */
    BAD(nv, "NV12 of odd width, chroma pitch one sample short", chroma_pitch,
        64);
    bad[n - 1].p.format = PVDC_FMT_NV12;
    bad[n - 1].p.fb_width = 65;
    BAD(nv, "chroma pitch not a multiple of 4", chroma_pitch, 130);
    BAD(nv, "chroma offset not a multiple of 4", chroma_offset,
        nv.chroma_offset - 2);
    BAD(nv, "huge chroma pitch", chroma_pitch, 0xfffffffc);
    BAD(nv, "unknown encoding", encoding, PVDC_COMPOSE_ENCODING__MAX);
    BAD(nv, "unknown range", range, PVDC_COMPOSE_RANGE__MAX);
#undef BAD

    s.planes[1] = good;
    s.planes[1].zpos = 1;
    for (int i = 0; i < n; i++) {
        frame_fill(img, 0x5a5a5a);
        s.planes[0] = bad[i].p;
        ok(!pvdc_compose(&s, vram, VRAM_SIZE, img, NULL) && d[0] == 0x5a5a5a,
           "rejected, nothing drawn: %s", bad[i].what);
    }

    s.planes[0] = good;
    ok(pvdc_compose(&s, vram, VRAM_SIZE, img, NULL),
       "framebuffer ending on the last VRAM byte is drawn");
    ok(!pvdc_compose(&s, vram, VRAM_SIZE - 4, img, NULL),
       "the same framebuffer with 4 bytes less VRAM is rejected");
    s.planes[0] = nv;
    ok(pvdc_compose(&s, vram, VRAM_SIZE, img, NULL),
       "chroma plane ending on the last VRAM byte is drawn");
    ok(!pvdc_compose(&s, vram, VRAM_SIZE - 4, img, NULL),
       "the same chroma plane with 4 bytes less VRAM is rejected");
    /* the Y plane flush with the end of VRAM, its Cb:Cr plane below */
    {
        PVDCComposePlane y_last = plane_new(PVDC_FMT_NV12, 64, 33, 0, 0);
        uint64_t bytes = fb_bytes(y_last.pitch, 64, 33, 1);

        y_last.chroma_offset = 8 * MIB;
        fill_random(y_last.chroma_offset, chroma_bytes(&y_last));
        plane_move(&y_last, VRAM_SIZE - bytes);
        s.planes[0] = y_last;
        s.num_planes = 1;
        ok(pvdc_compose(&s, vram, VRAM_SIZE, img, NULL) &&
           !pvdc_compose(&s, vram, VRAM_SIZE - 4, img, NULL),
           "NV12 Y plane ending on the last VRAM byte is drawn, with 4 "
           "bytes less rejected");
    }
    s.planes[0] = nv;

    /* only the chroma lines of the source rectangle are read */
    s.num_planes = 1;
    s.planes[0].src_h = 32 << 16;
    ok(pvdc_compose(&s, vram, VRAM_SIZE - 16 * nv.chroma_pitch, img, NULL) &&
       !pvdc_compose(&s, vram, VRAM_SIZE - 16 * nv.chroma_pitch - 4, img,
                     NULL), "a source rectangle reads its own chroma lines");
    s.num_planes = 2;
    s.planes[0] = good;
    ok(!pvdc_compose(&s, vram, VRAM_SIZE, small, NULL),
       "destination image of the wrong size is rejected");
    s.num_planes = PVDC_MAX_PLANES_PER_HEAD + 1;
    ok(!pvdc_compose(&s, vram, VRAM_SIZE, img, NULL),
       "too many planes are rejected");
    pixman_image_unref(small);
    pixman_image_unref(img);
}

static void test_direct(void)
{
    PVDCComposeScene s = {
        .width = 64, .height = 48, .num_planes = 1,
    };
    PVDCComposePlane *p = &s.planes[0];
    PVDCComposeDirect direct;
    pixman_image_t *img = frame_new(64, 48), *view;
    g_autofree PVDCComposeLutEntry *lut = lut_new(16, true, false);
    PVDCComposeColorDesc desc = { .gamma = lut, .gamma_size = 16 };
    g_autoptr(PVDCComposeColor) identity = pvdc_compose_color_new(&desc);
    g_autoptr(PVDCComposeColor) color = NULL;
    bool same;

    *p = plane_new(PVDC_FMT_XRGB8888, 80, 60, 64, 0);
    plane_place(p, 9 << 16, 7 << 16, 70 << 16, 52 << 16, -3, -2, 70, 52);
    ok(pvdc_compose_direct(&s, VRAM_SIZE, &direct) &&
       direct.format == PIXMAN_x8r8g8b8 && direct.stride == p->pitch &&
       direct.offset == p->offset + 9 * p->pitch + 12 * 4,
       "one XRGB8888 plane covering the head scans out directly");

    /* the direct view and the composed frame are the same picture */
    pvdc_compose(&s, vram, VRAM_SIZE, img, NULL);
    view = pixman_image_create_bits(direct.format, 64, 48,
                                    (uint32_t *)(vram + direct.offset),
                                    direct.stride);
    same = pvdc_compose_crc32(view) == pvdc_compose_crc32(img);
    pixman_image_unref(view);
    ok(same, "direct view and composed frame have the same CRC");

    s.color = identity;
    ok(pvdc_compose_direct(&s, VRAM_SIZE, &direct),
       "an identity colour pipeline keeps it direct");
    lut[3].green ^= 0x100;
    color = pvdc_compose_color_new(&desc);
    s.color = color;
    ok(!pvdc_compose_direct(&s, VRAM_SIZE, &direct),
       "an active colour pipeline prevents direct scanout");
    s.color = NULL;

    p->format = PVDC_FMT_ARGB8888;
    p->ctrl = PVDC_BLEND_PREMULTI << PVDC_PS_CTRL_BLEND_SHIFT;
    ok(pvdc_compose_direct(&s, VRAM_SIZE, &direct) &&
       direct.format == PIXMAN_x8r8g8b8,
       "premultiplied ARGB8888 over black is direct");
    s.background = 0x000001;
    ok(!pvdc_compose_direct(&s, VRAM_SIZE, &direct),
       "premultiplied ARGB8888 over a colour is not");
    p->ctrl = PVDC_BLEND_COVERAGE << PVDC_PS_CTRL_BLEND_SHIFT;
    s.background = 0;
    ok(!pvdc_compose_direct(&s, VRAM_SIZE, &direct),
       "coverage ARGB8888 is not");
    p->ctrl = PVDC_BLEND_NONE << PVDC_PS_CTRL_BLEND_SHIFT;
    s.background = 0xffffff;
    ok(pvdc_compose_direct(&s, VRAM_SIZE, &direct),
       "ARGB8888 with blend none is direct");
    p->alpha = 0xfe00;
    ok(!pvdc_compose_direct(&s, VRAM_SIZE, &direct),
       "translucent plane is not");
    p->alpha = 0xffff;
    p->dst_x = 1;
    ok(!pvdc_compose_direct(&s, VRAM_SIZE, &direct),
       "plane not covering the head is not");
    p->dst_x = -3;
    p->ctrl = PVDC_PS_CTRL_REFLECT_X;
    ok(!pvdc_compose_direct(&s, VRAM_SIZE, &direct), "reflected plane is not");
    p->ctrl = 0;
    p->src_x |= 1;
    ok(!pvdc_compose_direct(&s, VRAM_SIZE, &direct),
       "fractional source offset is not");
    p->src_x &= ~1;
    p->dst_w = 69;
    p->dst_x = -2;
    ok(!pvdc_compose_direct(&s, VRAM_SIZE, &direct), "scaled plane is not");
    p->dst_w = 70;
    p->dst_x = -3;
    p->format = PVDC_FMT_RGB565;
    ok(pvdc_compose_direct(&s, VRAM_SIZE, &direct) &&
       direct.format == PIXMAN_r5g6b5 &&
       direct.offset == p->offset + 9 * p->pitch + 12 * 2,
       "RGB565 is direct as r5g6b5");
    p->format = PVDC_FMT_YUYV;
    ok(!pvdc_compose_direct(&s, VRAM_SIZE, &direct), "YUYV is not");
    *p = plane_new(PVDC_FMT_NV12, 64, 48, 0, 0);
    ok(!pvdc_compose_direct(&s, VRAM_SIZE, &direct), "NV12 is not");
    *p = plane_new(PVDC_FMT_XRGB8888, 80, 60, 64, 0);
    plane_place(p, 9 << 16, 7 << 16, 70 << 16, 52 << 16, -3, -2, 70, 52);

    s.num_planes = 2;
    s.planes[1] = plane_new(PVDC_FMT_ARGB8888, 16, 16, 0, 1 * MIB);
    s.planes[1].zpos = 1;
    ok(!pvdc_compose_direct(&s, VRAM_SIZE, &direct),
       "a visible cursor prevents direct scanout");
    s.planes[1].dst_x = 64;
    ok(pvdc_compose_direct(&s, VRAM_SIZE, &direct),
       "an off-screen cursor does not");
    s.planes[1].dst_x = 0;
    s.planes[1].alpha = 0;
    ok(pvdc_compose_direct(&s, VRAM_SIZE, &direct),
       "nor does a transparent one");
    pixman_image_unref(img);
}

/*
 * @len bytes of VRAM from @offset, copied to the end of a mapping of
 * their own followed by an inaccessible page: a plane's view of memory
 * outside VRAM (guest pages in a binding), which a read past its end
 * faults on.  @view->map is unmapped by view_free().
 */
typedef struct View {
    uint8_t *map;
    size_t map_len;
} View;

static uint8_t *view_new(View *view, uint64_t offset, uint64_t len)
{
    size_t page = qemu_real_host_page_size();

    view->map_len = ROUND_UP(len, page) + page;
    view->map = mmap(NULL, view->map_len, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    g_assert(view->map != MAP_FAILED);
    g_assert(mprotect(view->map + view->map_len - page, page,
                      PROT_NONE) == 0);
    memcpy(view->map + view->map_len - page - len, vram + offset, len);
    return view->map + view->map_len - page - len;
}

static void view_free(View *view)
{
    if (view->map) {
        munmap(view->map, view->map_len);
    }
}

/*
 * A plane read through views of its own composes exactly as the same
 * bytes in VRAM, and is checked against the views' sizes, not VRAM's.
 */
static void test_views(void)
{
    PVDCComposeScene s = { .width = 64, .height = 48, .num_planes = 1 };
    PVDCComposePlane *p = &s.planes[0];
    pixman_image_t *from_vram = frame_new(64, 48), *img = frame_new(64, 48);
    PVDCComposeDirect direct;
    static const struct {
        const char *what;
        uint32_t format, w, h, ctrl;
        uint32_t src_x, dst_w, dst_h;
    } cases[] = {
        { "XRGB8888, bilinear upscale", PVDC_FMT_XRGB8888, 50, 40,
          PVDC_PS_CTRL_FILTER_BILINEAR, 0x18000, 64, 48 },
        { "ARGB8888, coverage blend", PVDC_FMT_ARGB8888, 40, 30,
          PVDC_BLEND_COVERAGE << PVDC_PS_CTRL_BLEND_SHIFT, 0x30000, 30, 20 },
        { "RGB565, reflected", PVDC_FMT_RGB565, 33, 21,
          PVDC_PS_CTRL_REFLECT_X, 0x10000, 32, 21 },
        { "NV12, scaled", PVDC_FMT_NV12, 31, 23,
          PVDC_PS_CTRL_FILTER_BILINEAR, 0x8000, 57, 41 },
    };

    for (int i = 0; i < ARRAY_SIZE(cases); i++) {
        const RefFormat *f = ref_format(cases[i].format);
        View mem = {}, chroma = {};
        uint64_t len;
        bool same;

        *p = plane_new(cases[i].format, cases[i].w, cases[i].h, 64, 4096);
        p->ctrl = cases[i].ctrl;
        p->alpha = 0xc000;
        p->src_x = cases[i].src_x;
        p->src_w -= cases[i].src_x;
        p->dst_x = 3;
        p->dst_y = 2;
        p->dst_w = cases[i].dst_w;
        p->dst_h = cases[i].dst_h;
        frame_fill(from_vram, 0x5a5a5a);
        frame_fill(img, 0x5a5a5a);
        ok(pvdc_compose(&s, vram, VRAM_SIZE, from_vram, NULL),
           "%s: drawn from VRAM", cases[i].what);

        len = fb_bytes(p->pitch, p->fb_width, p->fb_height, f->cpp);
        p->mem = view_new(&mem, p->offset, len);
        p->mem_size = len;
        p->offset = 0;
        if (f->chroma_cpp) {
            uint64_t clen = chroma_bytes(p);

            p->chroma_mem = view_new(&chroma, p->chroma_offset, clen);
            p->chroma_mem_size = clen;
            p->chroma_offset = 0;
        }
        same = pvdc_compose(&s, vram, VRAM_SIZE, img, NULL) &&
               !memcmp(pixman_image_get_data(img),
                       pixman_image_get_data(from_vram), 64 * 48 * 4);
        ok(same, "%s: drawn the same from views ending at a guard page",
           cases[i].what);
        ok(!pvdc_compose_direct(&s, VRAM_SIZE, &direct),
           "%s: a plane with views is never shown straight from VRAM",
           cases[i].what);
        p->mem_size = len - 4;
        ok(!pvdc_compose(&s, vram, VRAM_SIZE, img, NULL),
           "%s: a view 4 bytes short is rejected", cases[i].what);
        p->mem_size = len;
        if (f->chroma_cpp) {
            p->chroma_mem_size -= 4;
            ok(!pvdc_compose(&s, vram, VRAM_SIZE, img, NULL),
               "%s: a chroma view 4 bytes short is rejected", cases[i].what);
        }
        view_free(&chroma);
        view_free(&mem);
    }
    pixman_image_unref(from_vram);
    pixman_image_unref(img);
}

static void test_crc(void)
{
    uint32_t px[2] = { 0xff112233, 0x00445566 };
    pixman_image_t *img = pixman_image_create_bits(PIXMAN_x8r8g8b8, 2, 1,
                                                   px, 8);
    pixman_image_t *img565, *conv;
    uint16_t p565[4 * 3];

    ok(pvdc_compose_crc32(img) == 0x1ee7bcf9,
       "CRC of 0x112233 0x445566 is zlib crc32 of 33 22 11 00 66 55 44 00");
    pixman_image_unref(img);

    for (size_t i = 0; i < ARRAY_SIZE(p565); i++) {
        p565[i] = g_rand_int(rng);
    }
    img565 = pixman_image_create_bits(PIXMAN_r5g6b5, 3, 3, (uint32_t *)p565,
                                      8);
    conv = frame_new(3, 3);
    pixman_image_composite32(PIXMAN_OP_SRC, img565, NULL, conv, 0, 0, 0, 0,
                             0, 0, 3, 3);
    ok(pvdc_compose_crc32(img565) == pvdc_compose_crc32(conv),
       "CRC of an RGB565 image is that of its XRGB8888 conversion");
    pixman_image_unref(conv);
    pixman_image_unref(img565);

    /* a scaled, rotated NV12 plane: the CRC is that of the model's frame */
    {
        PVDCComposeScene s = {
            .width = 80, .height = 60, .background = 0x123456,
            .num_planes = 1,
        };
        g_autofree uint32_t *ref = g_new(uint32_t, 80 * 60);

        s.planes[0] = plane_new(PVDC_FMT_NV12, 33, 21, 0, 0);
        s.planes[0].dst_x = 3;
        s.planes[0].dst_w = 75;
        s.planes[0].dst_h = 55;
        s.planes[0].ctrl = PVDC_PS_CTRL_ROTATE_180;
        s.planes[0].encoding = PVDC_COMPOSE_BT2020;
        s.planes[0].range = PVDC_COMPOSE_RANGE_FULL;
        ref_compose(&s, ref);
        img = frame_new(80, 60);
        ok(pvdc_compose(&s, vram, VRAM_SIZE, img, NULL) &&
           pvdc_compose_crc32(img) == ref_crc(ref, 80, 60),
           "CRC of a scaled, rotated NV12 plane is that of the model");
        pixman_image_unref(img);
    }
}

/* A plane of random geometry, format and layout on a @w x @h head. */
static void random_plane(PVDCComposePlane *p, uint32_t w, uint32_t h)
{
    uint32_t format = formats[g_rand_int_range(rng, 0, NUM_FORMATS)].fourcc;
    uint32_t fw = g_rand_int_range(rng, 1, 40) * 2;
    uint32_t fh = g_rand_int_range(rng, 1, 60);

    *p = plane_new(format, fw, fh, g_rand_int_range(rng, 0, 4) * 4, 0);
    plane_yuv_random(p);
    p->src_x = g_rand_int_range(rng, 0, ((fw - 1) << 16) + 1);
    p->src_y = g_rand_int_range(rng, 0, ((fh - 1) << 16) + 1);
    p->src_w = g_rand_int_range(rng, 1 << 16, (fw << 16) - p->src_x + 1);
    p->src_h = g_rand_int_range(rng, 1 << 16, (fh << 16) - p->src_y + 1);
    p->dst_w = MAX(1, (p->src_w >> 16) * g_rand_int_range(rng, 1, 5) /
                      g_rand_int_range(rng, 1, 4));
    p->dst_h = MAX(1, (p->src_h >> 16) * g_rand_int_range(rng, 1, 5) /
                      g_rand_int_range(rng, 1, 4));
    p->dst_x = g_rand_int_range(rng, -20, w);
    p->dst_y = g_rand_int_range(rng, -20, h);
    p->ctrl = g_rand_int_range(rng, 0, 8) << 4 |
              (g_rand_boolean(rng) ? PVDC_PS_CTRL_FILTER_BILINEAR : 0);
}

/*
 * Whatever part of VRAM is written, every pixel that changes lies inside
 * the rectangle pvdc_compose_plane_damage() gives, and redrawing that
 * rectangle alone gives the full new frame; writes outside the ranges of
 * pvdc_compose_plane_vram(), and Y plane writes outside the lines of
 * pvdc_compose_plane_sources() (what dirty tracking looks up), change
 * nothing.
 */
static void test_plane_damage(void)
{
    const int w = 96, h = 72;
    pixman_image_t *before = frame_new(w, h), *after = frame_new(w, h);
    pixman_image_t *patched = frame_new(w, h);
    QemuRect r;
    int bad = 0, cases = 0, unseen = 0, exact_ok;

    for (int iter = 0; iter < 600; iter++) {
        PVDCComposeScene s = {
            .width = w, .height = h, .num_planes = 1,
        };
        PVDCComposePlane *p = &s.planes[0];
        uint64_t start, len, rs[2], re[2];
        const uint32_t *d0, *d1;
        unsigned int ranges;
        bool hit, inside = false, seen = false, chroma = false;
        bool changed = false;
        PVDCComposeSpan span[2];

        random_plane(p, w, h);
        ranges = pvdc_compose_plane_vram(p, rs, re);
        /* around a random one of the memory planes */
        if (g_rand_int_range(rng, 0, ranges) == 1) {
            start = p->chroma_offset;
            len = chroma_bytes(p);
        } else {
            start = p->offset;
            len = fb_bytes(p->pitch, p->fb_width, p->fb_height,
                           ref_format(p->format)->cpp);
        }
        start += g_rand_int_range(rng, -64, len);
        len = g_rand_boolean(rng) ? g_rand_int_range(rng, 1, 8) :
              g_rand_int_range(rng, 1, len);
        start = MIN(start, VRAM_SIZE - 1);
        len = MIN(len, VRAM_SIZE - start);
        for (unsigned int i = 0; i < ranges; i++) {
            inside |= start < re[i] && start + len > rs[i];
        }
        chroma = ranges == 2 && start < re[1] && start + len > rs[1];
        if (pvdc_compose_plane_sources(p, span)) {
            for (uint32_t y = 0; y < span[0].rows; y++) {
                uint64_t row = span[0].offset + (uint64_t)y * span[0].pitch;

                seen |= start < row + span[0].row_bytes && start + len > row;
            }
        }

        pvdc_compose(&s, vram, VRAM_SIZE, before, NULL);
        for (uint64_t i = start; i < start + len; i++) {
            vram[i] ^= 0xff;
        }
        pvdc_compose(&s, vram, VRAM_SIZE, after, NULL);
        hit = pvdc_compose_plane_damage(p, w, h, start, len, &r);

        d0 = pixman_image_get_data(before);
        d1 = pixman_image_get_data(after);
        for (int y = 0; y < h; y++) {
            for (int x = 0; x < w; x++) {
                bool in = hit && x >= r.x && y >= r.y &&
                          x < r.x + r.width && y < r.y + r.height;

                changed |= (d0[y * w + x] ^ d1[y * w + x]) & 0xffffff;
                if ((d0[y * w + x] ^ d1[y * w + x]) & 0xffffff &&
                    (!in || !inside)) {
                    if (!bad++) {
                        printf("# iteration %d (%.4s): (%d,%d) changed "
                               "outside %d,%d %ux%u%s\n", iter,
                               (char *)&p->format, x, y, r.x, r.y, r.width,
                               r.height, inside ? "" : " (not in its VRAM)");
                    }
                }
            }
        }
        if (changed && !seen && !chroma && !unseen++) {
            printf("# iteration %d (%.4s): writing %" PRIu64 " bytes at "
                   "%" PRIu64 " changes pixels, outside the source lines\n",
                   iter, (char *)&p->format, len, start);
        }
        if (hit) {
            const uint32_t *d2 = pixman_image_get_data(patched);

            memcpy(pixman_image_get_data(patched), d0, w * h * 4);
            pvdc_compose(&s, vram, VRAM_SIZE, patched, &r);
            for (int i = 0; i < w * h; i++) {
                if ((d2[i] ^ d1[i]) & 0xffffff) {
                    printf("# iteration %d: redrawing %d,%d %ux%u gives "
                           "%06x at (%d,%d), the full frame %06x\n",
                           iter, r.x, r.y, r.width, r.height,
                           d2[i] & 0xffffff, i % w, i / w, d1[i] & 0xffffff);
                    bad++;
                    break;
                }
            }
        }
        cases++;
    }
    ok(!bad, "damage rectangle holds every changed pixel, luma and chroma "
       "writes (%d cases)", cases);
    ok(!unseen, "every luma write that changes a pixel lies in the source "
       "lines dirty tracking looks up (%d cases)", cases);

    /* unscaled planes get exact rectangles */
    {
        PVDCComposePlane p = plane_new(PVDC_FMT_XRGB8888, 50, 40, 56, 0);

        plane_place(&p, 4 << 16, 2 << 16, 40 << 16, 30 << 16, 10, 20, 40, 30);
        exact_ok = pvdc_compose_plane_damage(&p, w, h, p.offset +
                                             5 * p.pitch + 6 * 4, 4, &r) &&
                   r.x == 12 && r.y == 23 && r.width == 1 && r.height == 1;
        exact_ok &= pvdc_compose_plane_damage(&p, w, h, p.offset +
                                              3 * p.pitch, p.pitch * 2, &r) &&
                    r.x == 10 && r.y == 21 && r.width == 40 && r.height == 2;
        exact_ok &= !pvdc_compose_plane_damage(&p, w, h, p.offset +
                                               3 * p.pitch + 200, 56, &r);
        exact_ok &= !pvdc_compose_plane_damage(&p, w, h, 0, p.offset, &r);
        exact_ok &= !pvdc_compose_plane_damage(&p, w, h, p.offset, 4, &r);
        ok(exact_ok, "unscaled plane: exact damage, padding and pixels "
           "outside the source rectangle ignored");
        exact_ok = pvdc_compose_plane_rect(&p, w, h, &r) && r.x == 10 &&
                   r.y == 20 && r.width == 40 && r.height == 30;
        p.dst_x = 80;
        p.dst_y = -10;
        exact_ok &= pvdc_compose_plane_rect(&p, w, h, &r) && r.x == 80 &&
                    r.y == 0 && r.width == 16 && r.height == 20;
        p.dst_x = 96;
        exact_ok &= !pvdc_compose_plane_rect(&p, w, h, &r) && !r.width;
        ok(exact_ok, "plane rectangle is clipped to the head");
    }
    {
        /* macropixel 3 of line 2 (pixels 6 and 7) shows at (16, 7) */
        PVDCComposePlane p = plane_new(PVDC_FMT_YUYV, 40, 20, 0, 0);

        p.dst_x = 10;
        p.dst_y = 5;
        exact_ok = true;
        for (int byte = 0; byte < 4; byte++) {
            /* Y0 Cb Y1 Cr: chroma belongs to both pixels, luma to one */
            int lo = byte & 1 ? 16 : 16 + byte / 2;
            int hi = byte & 1 ? 18 : lo + 1;

            exact_ok &= pvdc_compose_plane_damage(&p, w, h, p.offset +
                                                  2 * p.pitch + 3 * 4 + byte,
                                                  1, &r) &&
                        r.y == 7 && r.height == 1 && r.x <= lo &&
                        r.x + r.width >= hi && r.x >= 16 &&
                        r.x + r.width <= 18;
        }
        ok(exact_ok, "YUYV: a Cb or Cr write damages both pixels of its "
           "macropixel, and nothing else");
    }
    {
        /* pixels 3..6 of lines 1..2 read macropixels 1..3 of both lines */
        PVDCComposePlane p = plane_new(PVDC_FMT_YUYV, 40, 20, 0, 0);
        PVDCComposeSpan span[2];

        plane_place(&p, 3 << 16, 1 << 16, 4 << 16, 2 << 16, 0, 0, 4, 2);
        ok(pvdc_compose_plane_sources(&p, span) == 1 &&
           span[0].offset == p.offset + p.pitch + 2 * 2 &&
           span[0].row_bytes == 6 * 2 && span[0].rows == 2 &&
           span[0].pitch == p.pitch,
           "YUYV: the source lines are whole macropixels");
    }
    {
        PVDCComposePlane p = plane_new(PVDC_FMT_NV12, 50, 41, 8, 0);
        uint64_t rs[2], re[2];

        ok(pvdc_compose_plane_vram(&p, rs, re) == 2 && rs[0] == p.offset &&
           re[0] == p.offset + 40 * p.pitch + 50 &&
           rs[1] == p.chroma_offset &&
           re[1] == p.chroma_offset + 20 * p.chroma_pitch + 25 * 2,
           "an NV12 framebuffer occupies its Y plane and its Cb:Cr plane");
        {
            PVDCComposeSpan span[2];

            ok(pvdc_compose_plane_sources(&p, span) == 2 &&
               span[0].offset == p.offset && span[0].row_bytes == 50 &&
               span[0].rows == 41 && span[0].pitch == p.pitch &&
               span[1].offset == p.chroma_offset &&
               span[1].row_bytes == 25 * 2 && span[1].rows == 21 &&
               span[1].pitch == p.chroma_pitch,
               "an NV12 plane samples both of its memory planes");
        }
        p.chroma_pitch = 48;
        ok(!pvdc_compose_plane_vram(&p, rs, re),
           "an invalid one occupies nothing");
        /* chroma sample (6, 4) reaches pixels 11..13 of lines 7..10 */
        p = plane_new(PVDC_FMT_NV12, 50, 41, 8, 0);
        plane_place(&p, 2 << 16, 3 << 16, 40 << 16, 30 << 16, 20, 10, 40, 30);
        ok(pvdc_compose_plane_damage(&p, w, h, p.chroma_offset +
                                     4 * p.chroma_pitch + 6 * 2 + 1, 1, &r) &&
           r.x == 20 + 11 - 2 && r.y == 10 + 7 - 3 && r.width == 3 &&
           r.height == 4, "a chroma write damages exactly the pixels that "
           "upsample it");
        p = plane_new(PVDC_FMT_RGB565, 50, 41, 8, 0);
        p.offset = UINT64_MAX - 1003;
        ok(pvdc_compose_plane_vram(&p, rs, re) == 1 && re[0] == UINT64_MAX,
           "ranges saturate at 2^64");
    }
    {
        QemuRect acc = { 0, 0, 0, 0 }, a = { 5, 6, 10, 10 },
                 b = { -2, 20, 3, 1 }, e = { 100, 100, 0, 5 };

        pvdc_compose_rect_union(&acc, &a);
        pvdc_compose_rect_union(&acc, &e);
        pvdc_compose_rect_union(&acc, &b);
        ok(acc.x == -2 && acc.y == 6 && acc.width == 17 && acc.height == 15,
           "rectangle union ignores empty rectangles");
    }
    pixman_image_unref(before);
    pixman_image_unref(after);
    pixman_image_unref(patched);
}

/* Random scenes of every kind against the reference. */
static void test_random(void)
{
    static const uint32_t ratios[][2] = {
        { 1, 1 }, { 1, 1 }, { 2, 1 }, { 1, 2 }, { 3, 2 }, { 3, 4 },
        { 4, 1 }, { 1, 4 }, { 8, 1 }, { 37, 3 },
    };
    int failures = 0, n = 400;

    for (int iter = 0; iter < n; iter++) {
        PVDCComposeScene s = {
            .width = g_rand_int_range(rng, 1, 120),
            .height = g_rand_int_range(rng, 1, 90),
            .background = g_rand_int(rng),
            .num_planes = g_rand_int_range(rng, 0, 5),
        };
        g_autofree PVDCComposeLutEntry *de = lut_new(33, false, false);
        g_autofree PVDCComposeLutEntry *ga = lut_new(1024, false, false);
        uint64_t ctm[9];
        PVDCComposeColorDesc desc = { 0 };
        bool good;

        for (unsigned int i = 0; i < s.num_planes; i++) {
            PVDCComposePlane *p = &s.planes[i];
            uint32_t format = formats[g_rand_int_range(rng, 0,
                                                       NUM_FORMATS)].fourcc;
            int rx = g_rand_int_range(rng, 0, ARRAY_SIZE(ratios));
            int ry = g_rand_int_range(rng, 0, ARRAY_SIZE(ratios));
            uint32_t sw = g_rand_int_range(rng, 1, 16) * 4;
            uint32_t sh = g_rand_int_range(rng, 1, 16) * 4;
            uint32_t fw = sw + g_rand_int_range(rng, 0, 4) * 2;
            uint32_t fh = sh + g_rand_int_range(rng, 0, 4);

            *p = plane_new(format, fw, fh, g_rand_int_range(rng, 0, 3) * 4,
                           (uint64_t)i * MIB);
            plane_yuv_random(p);
            p->src_x = g_rand_int_range(rng, 0, fw - sw + 1) << 16;
            p->src_y = g_rand_int_range(rng, 0, fh - sh + 1) << 16;
            p->src_w = sw << 16;
            p->src_h = sh << 16;
            p->dst_w = sw * ratios[rx][0] / ratios[rx][1];
            p->dst_h = sh * ratios[ry][0] / ratios[ry][1];
            p->dst_x = g_rand_int_range(rng, -(int)p->dst_w, s.width + 1);
            p->dst_y = g_rand_int_range(rng, -(int)p->dst_h, s.height + 1);
            p->zpos = g_rand_int_range(rng, 0, 10);
            p->alpha = g_rand_boolean(rng) ? 0xffff : g_rand_int(rng);
            p->ctrl = g_rand_int_range(rng, 0, 3) << PVDC_PS_CTRL_BLEND_SHIFT |
                      g_rand_int_range(rng, 0, 8) << 4;
            if (g_rand_int_range(rng, 0, 4) == 0) {
                p->ctrl |= PVDC_PS_CTRL_FILTER_BILINEAR;
            }
            if (i == 1 && g_rand_boolean(rng) && !p->chroma_pitch) {
                plane_move(p, 4 * MIB);     /* no longer flush with VRAM */
            }
        }
        switch (g_rand_int_range(rng, 0, 4)) {
        case 1:
            desc.degamma = de;
            desc.degamma_size = 33;
            /* fall through */
        case 2:
            for (int j = 0; j < 9; j++) {
                ctm[j] = ctm_value(g_rand_double_range(rng, -1.5, 1.5));
            }
            desc.ctm = ctm;
            desc.gamma = ga;
            desc.gamma_size = 1024;
            break;
        case 3:
            desc.gamma = ga;
            desc.gamma_size = 1024;
            break;
        }
        quiet = failures > 0;
        good = check_scene_color(&s, desc.degamma || desc.gamma ? &desc :
                                 NULL);
        quiet = false;
        if (!good && !failures++) {
            printf("# random scene %d failed\n", iter);
        }
    }
    ok(!failures, "%d random scenes match the reference", n);
}

int main(int argc, char **argv)
{
    rng = g_rand_new_with_seed(argc > 1 ? atoi(argv[1]) : 1);
    vram_init();

    test_formats();
    test_blend();
    test_scaling();
    test_large_upscale();
    test_transform_unscaled();
    test_fractional_and_bilinear();
    test_zpos_and_clipping();
    test_yuv();
    test_color();
    test_color_gamma_tables();
    test_damage();
    test_rejects();
    test_direct();
    test_views();
    test_crc();
    test_plane_damage();
    test_random();

    printf("# largest difference where bilinear filtering is tolerated: "
           "%d\n", tolerated_max);
    printf("# %" PRIu64 " scenes composed and compared, %" PRIu64
           " of %" PRIu64 " pixels sat on a sampling boundary\n",
           scenes_total, ambiguous_total, compared_total);
    ok(ambiguous_total * 100 < compared_total,
       "less than 1%% of the pixels could not be compared strictly");
    printf("1..%u\n", tests_run);
    if (tests_failed) {
        printf("# %u of %u failed\n", tests_failed, tests_run);
    }
    g_rand_free(rng);
    return tests_failed ? 1 : 0;
}
