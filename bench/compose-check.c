/*
 * pvdc: check the composition engine against a per-pixel reference.
 *
 * A standalone program (bench/Makefile builds it against the QEMU headers
 * and links hw/display/pvdc-compose.c directly): every case composes a
 * scene with pvdc_compose() and with the straightforward floating-point
 * model below, which reads framebuffers one pixel at a time and applies the
 * DRM blend equations literally, and compares the two frames.  VRAM is
 * mapped between two inaccessible pages and framebuffers are placed flush
 * against its end, so a read past VRAM by pixman or the engine faults.
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

#define VRAM_SIZE       (16 * 1024 * 1024)

static uint8_t *vram;
/* pixels whose nearest sample sits on a pixel boundary, either side is right */
static uint8_t *ref_ambiguous;
static unsigned int ambiguous_total, compared_total;
static bool quiet;
static unsigned int tests_run, tests_failed;
static GRand *rng;

/* ------------------------------------------------------------------ */
/* Reference model                                                     */
/* ------------------------------------------------------------------ */

static unsigned int ref_cpp(uint32_t format)
{
    return format == PVDC_FMT_RGB565 || format == PVDC_FMT_YUYV ? 2 : 4;
}

static bool ref_has_alpha(uint32_t format)
{
    return format == PVDC_FMT_ARGB8888 || format == PVDC_FMT_ABGR8888;
}

static double ref_clamp(double v)
{
    return v < 0 ? 0 : v > 255 ? 255 : v;
}

/* One framebuffer pixel as r, g, b, a in 0..255 (rgb as stored). */
static void ref_fetch(const PVDCComposePlane *p, int x, int y, double c[4])
{
    const uint8_t *row = vram + p->offset + (uint64_t)p->pitch * y;
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
        c[0] = ((w >> 20) & 0x3ff) * 255.0 / 1023;
        c[1] = ((w >> 10) & 0x3ff) * 255.0 / 1023;
        c[2] = (w & 0x3ff) * 255.0 / 1023;
        break;
    case PVDC_FMT_YUYV: {
        /* BT.601, limited range */
        const uint8_t *m = row + (x & ~1) * 2;
        double yy = 255.0 / 219 * (row[x * 2] - 16);
        double u = m[1] - 128, v = m[3] - 128;

        c[0] = ref_clamp(yy + 1.596027 * v);
        c[1] = ref_clamp(yy - 0.812968 * v - 0.391762 * u);
        c[2] = ref_clamp(yy + 2.017232 * u);
        break;
    }
    default:
        g_assert_not_reached();
    }
}

/*
 * Framebuffer coordinate sampled for destination offset d (pixel centre
 * d + 0.5) along one axis.  The engine's scale factor is src / dst rounded
 * to 16.16, which the model takes over; the rest is exact.
 */
static double ref_coord(uint32_t src, uint32_t src_size, uint32_t dst_size,
                        bool flip, int d)
{
    double scale = (double)(((uint64_t)src_size + dst_size / 2) / dst_size);
    double t = (d + 0.5) * scale;

    return (flip ? src + (double)src_size - t : src + t) / 65536;
}

static int ref_clampi(int v, int lo, int hi)
{
    return v < lo ? lo : v > hi ? hi : v;
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
    int lx = p->src_x >> 16, ly = p->src_y >> 16;
    int hx = DIV_ROUND_UP((uint64_t)p->src_x + p->src_w, 65536) - 1;
    int hy = DIV_ROUND_UP((uint64_t)p->src_y + p->src_h, 65536) - 1;
    /* pixman's rounding only matters where the scale is not exact */
    const double ex = p->src_w % p->dst_w ? 2.0 / 65536 : 0;
    const double ey = p->src_h % p->dst_h ? 2.0 / 65536 : 0;

    if (ref_cpp(p->format) == 2) {
        lx &= ~1;
    }
    if (p->format == PVDC_FMT_YUYV) {
        hx |= 1;
    }
    if (!(p->ctrl & PVDC_PS_CTRL_FILTER_BILINEAR)) {
        int x = ref_clampi((int)ceil(u) - 1, lx, hx);
        int y = ref_clampi((int)ceil(v) - 1, ly, hy);

        ref_fetch(p, x, y, c);
        return x == ref_clampi((int)ceil(u - ex) - 1, lx, hx) &&
               x == ref_clampi((int)ceil(u + ex) - 1, lx, hx) &&
               y == ref_clampi((int)ceil(v - ey) - 1, ly, hy) &&
               y == ref_clampi((int)ceil(v + ey) - 1, ly, hy);
    }

    u -= 0.5;
    v -= 0.5;
    {
        int x0 = floor(u), y0 = floor(v);
        double wx = u - x0, wy = v - y0, q[4][4];
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

/* The whole frame, planes in zpos order, DRM blend equations. */
static void ref_compose(const PVDCComposeScene *s, uint32_t *frame)
{
    unsigned int order[PVDC_MAX_PLANES_PER_HEAD];

    for (unsigned int i = 0; i < s->num_planes; i++) {
        unsigned int j = i;

        while (j > 0 && s->planes[order[j - 1]].zpos > s->planes[i].zpos) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = i;
    }
    for (uint32_t i = 0; i < s->width * s->height; i++) {
        frame[i] = s->background & 0xffffff;
    }
    g_free(ref_ambiguous);
    ref_ambiguous = g_new0(uint8_t, s->width * s->height);
    for (unsigned int k = 0; k < s->num_planes; k++) {
        const PVDCComposePlane *p = &s->planes[order[k]];
        unsigned int blend = (p->ctrl >> PVDC_PS_CTRL_BLEND_SHIFT) & 3;
        double pa = round(p->alpha * 255.0 / 65535) / 255;

        for (int y = MAX(p->dst_y, 0);
             y < MIN(p->dst_y + (int)p->dst_h, (int)s->height); y++) {
            for (int x = MAX(p->dst_x, 0);
                 x < MIN(p->dst_x + (int)p->dst_w, (int)s->width); x++) {
                uint32_t *px = &frame[y * s->width + x];
                double c[4], fa, out[3];

                if (!ref_sample(p, x - p->dst_x, y - p->dst_y, c)) {
                    ref_ambiguous[y * s->width + x] = 1;
                }
                fa = ref_has_alpha(p->format) && blend != PVDC_BLEND_NONE ?
                     c[3] / 255 : 1;
                for (int i = 0; i < 3; i++) {
                    double bg = (*px >> (16 - 8 * i)) & 0xff;
                    double fg = blend == PVDC_BLEND_COVERAGE ? c[i] * fa :
                                c[i];

                    out[i] = ref_clamp(pa * fg + (1 - pa * fa) * bg);
                }
                *px = (uint32_t)lround(out[0]) << 16 |
                      (uint32_t)lround(out[1]) << 8 | lround(out[2]);
            }
        }
    }
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

/*
 * A plane reading a whole @w x @h framebuffer, placed so that its last
 * byte is the last byte of VRAM (minus @gap), filled with random pixels.
 */
static PVDCComposePlane plane_new(uint32_t format, uint32_t w, uint32_t h,
                                  uint32_t pitch_extra, uint64_t gap)
{
    unsigned int cpp = ref_cpp(format);
    PVDCComposePlane p = {
        .format = format,
        .pitch = ROUND_UP(w * cpp, 4) + pitch_extra,
        .fb_width = w,
        .fb_height = h,
        .src_w = w << 16,
        .src_h = h << 16,
        .dst_w = w,
        .dst_h = h,
        .alpha = 0xffff,
    };
    uint64_t bytes = (uint64_t)p.pitch * (h - 1) + w * cpp;

    p.offset = ROUND_DOWN(VRAM_SIZE - gap - bytes, 4);
    fill_random(p.offset, bytes);
    return p;
}

/* Put @p's framebuffer at @offset (keeping its content random). */
static void plane_move(PVDCComposePlane *p, uint64_t offset)
{
    p->offset = offset;
    fill_random(offset, (uint64_t)p->pitch * p->fb_height);
}

static pixman_image_t *frame_new(uint32_t w, uint32_t h)
{
    return pixman_image_create_bits(PIXMAN_x8r8g8b8, w, h, NULL, w * 4);
}

static void frame_fill(pixman_image_t *img, uint32_t value)
{
    uint32_t *d = pixman_image_get_data(img);
    int n = pixman_image_get_stride(img) / 4 * pixman_image_get_height(img);

    for (int i = 0; i < n; i++) {
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
 * within @tol; on failure describe the first differing pixel.
 */
static bool frames_match(pixman_image_t *img, const uint32_t *ref,
                         const QemuRect *damage, const uint32_t *outside,
                         int tol)
{
    int w = pixman_image_get_width(img), h = pixman_image_get_height(img);
    const uint32_t *d = pixman_image_get_data(img);
    int bad = 0;

    for (int y = 0; y < h; y++) {
        for (int x = 0; x < w; x++) {
            uint32_t want = ref[y * w + x], got = d[y * w + x] & 0xffffff;

            compared_total++;
            if (ref_ambiguous[y * w + x]) {
                ambiguous_total++;
                continue;
            }

            if (damage && (x < damage->x || y < damage->y ||
                           x >= damage->x + damage->width ||
                           y >= damage->y + damage->height)) {
                want = outside[y * w + x] & 0xffffff;
            }
            for (int i = 0; i < 24; i += 8) {
                int dv = (int)((got >> i) & 0xff) - (int)((want >> i) & 0xff);

                if (abs(dv) > tol) {
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
        printf("# %d pixel(s) differ\n", bad);
    }
    return !bad;
}

static int format_tol(uint32_t format)
{
    switch (format) {
    case PVDC_FMT_YUYV:
        return 2;
    case PVDC_FMT_XRGB2101010:
        return 1;
    default:
        return 0;
    }
}

/* Compose @s whole and compare with the reference. */
static bool check_scene(const PVDCComposeScene *s, int tol)
{
    g_autofree uint32_t *ref = g_new(uint32_t, s->width * s->height);
    pixman_image_t *img = frame_new(s->width, s->height);
    bool good;

    frame_fill(img, 0xdeadbeef);
    ref_compose(s, ref);
    good = pvdc_compose(s, vram, VRAM_SIZE, img, NULL) &&
           frames_match(img, ref, NULL, NULL, tol);
    pixman_image_unref(img);
    return good;
}

static const struct {
    uint32_t fourcc;
    const char *name;
} formats[] = {
    { PVDC_FMT_XRGB8888, "XRGB8888" },
    { PVDC_FMT_ARGB8888, "ARGB8888" },
    { PVDC_FMT_XBGR8888, "XBGR8888" },
    { PVDC_FMT_ABGR8888, "ABGR8888" },
    { PVDC_FMT_RGB565, "RGB565" },
    { PVDC_FMT_XRGB2101010, "XRGB2101010" },
    { PVDC_FMT_YUYV, "YUYV" },
};

static const char *blend_names[] = { "none", "premultiplied", "coverage" };

/* ------------------------------------------------------------------ */
/* Cases                                                               */
/* ------------------------------------------------------------------ */

static void test_formats(void)
{
    for (size_t f = 0; f < ARRAY_SIZE(formats); f++) {
        PVDCComposeScene s = {
            .width = 160, .height = 100, .background = 0x203040,
            .num_planes = 1,
        };

        /* opaque copy, partly off the top-left corner, odd pitch */
        s.planes[0] = plane_new(formats[f].fourcc, 96, 70, 12, 0);
        s.planes[0].dst_x = -10;
        s.planes[0].dst_y = -7;
        ok(check_scene(&s, format_tol(formats[f].fourcc)),
           "%s: unscaled copy, clipped top-left", formats[f].name);

        /* partly off the bottom-right, from an integer source offset */
        s.planes[0].src_x = 6 << 16;
        s.planes[0].src_y = 3 << 16;
        s.planes[0].src_w = s.planes[0].dst_w = 80;
        s.planes[0].src_h = s.planes[0].dst_h = 60;
        s.planes[0].src_w <<= 16;
        s.planes[0].src_h <<= 16;
        s.planes[0].dst_x = 110;
        s.planes[0].dst_y = 60;
        ok(check_scene(&s, format_tol(formats[f].fourcc)),
           "%s: source offset, clipped bottom-right", formats[f].name);

        /* odd source offset (for 2-byte formats: not 32-bit aligned) */
        s.planes[0].src_x = 7 << 16;
        s.planes[0].dst_x = 5;
        s.planes[0].dst_y = 5;
        ok(check_scene(&s, format_tol(formats[f].fourcc)),
           "%s: odd source x", formats[f].name);
    }
}

static void test_blend(void)
{
    static const uint16_t alphas[] = { 0xffff, 0x8000, 0x1234, 0xff00, 0 };
    static const uint32_t fmts[] = {
        PVDC_FMT_ARGB8888, PVDC_FMT_ABGR8888, PVDC_FMT_XRGB8888,
    };

    for (size_t f = 0; f < ARRAY_SIZE(fmts); f++) {
        for (unsigned int b = 0; b < 3; b++) {
            for (size_t a = 0; a < ARRAY_SIZE(alphas); a++) {
                PVDCComposeScene s = {
                    .width = 64, .height = 48, .background = 0x102030,
                    .num_planes = 2,
                };

                s.planes[0] = plane_new(PVDC_FMT_XRGB8888, 64, 48, 0,
                                        64 * 1024);
                s.planes[1] = plane_new(fmts[f], 40, 30, 0, 0);
                s.planes[1].dst_x = 30;
                s.planes[1].dst_y = 25;
                s.planes[1].zpos = 1;
                s.planes[1].alpha = alphas[a];
                s.planes[1].ctrl = b << PVDC_PS_CTRL_BLEND_SHIFT;
                ok(check_scene(&s, 2), "blend %s, %s, plane alpha 0x%x",
                   blend_names[b], formats[f == 1 ? 3 : f == 2 ? 0 : 1].name,
                   alphas[a]);
            }
        }
    }
}

static void test_scaling(void)
{
    /* ratios exact in 16.16, so the reference needs no rounding model */
    static const struct {
        uint32_t sw, sh, dw, dh;
    } sizes[] = {
        { 40, 30, 80, 60 },     /* 2x up */
        { 80, 60, 40, 30 },     /* 2x down */
        { 40, 32, 60, 48 },     /* 1.5x up */
        { 64, 48, 48, 36 },     /* 0.75x */
        { 16, 8, 128, 64 },     /* 8x up, the device's limit */
        { 128, 96, 32, 24 },    /* 4x down, the device's limit */
        { 64, 30, 32, 60 },     /* down in x, up in y */
    };
    static const uint32_t flips[] = {
        0, PVDC_PS_CTRL_REFLECT_X, PVDC_PS_CTRL_REFLECT_Y,
        PVDC_PS_CTRL_ROTATE_180,
        PVDC_PS_CTRL_ROTATE_180 | PVDC_PS_CTRL_REFLECT_X,
    };
    static const uint32_t fmts[] = {
        PVDC_FMT_XRGB8888, PVDC_FMT_RGB565, PVDC_FMT_YUYV,
        PVDC_FMT_ARGB8888,
    };

    for (size_t i = 0; i < ARRAY_SIZE(sizes); i++) {
        for (size_t f = 0; f < ARRAY_SIZE(flips); f++) {
            for (size_t k = 0; k < ARRAY_SIZE(fmts); k++) {
                PVDCComposeScene s = {
                    .width = 150, .height = 110, .background = 0x405060,
                    .num_planes = 1,
                };
                PVDCComposePlane *p = &s.planes[0];

                *p = plane_new(fmts[k], sizes[i].sw + 6, sizes[i].sh + 4,
                               4, 0);
                p->src_x = 2 << 16;
                p->src_y = 3 << 16;
                p->src_w = sizes[i].sw << 16;
                p->src_h = sizes[i].sh << 16;
                p->dst_w = sizes[i].dw;
                p->dst_h = sizes[i].dh;
                p->dst_x = 150 - sizes[i].dw / 2 - 3;
                p->dst_y = -(int32_t)sizes[i].dh / 3;
                p->ctrl = flips[f] |
                          PVDC_BLEND_PREMULTI << PVDC_PS_CTRL_BLEND_SHIFT;
                ok(check_scene(&s, format_tol(fmts[k]) + 1),
                   "nearest %ux%u -> %ux%u, ctrl 0x%x, format %.4s, clipped",
                   sizes[i].sw, sizes[i].sh, sizes[i].dw, sizes[i].dh,
                   p->ctrl, (const char *)&fmts[k]);
            }
        }
    }
}

static void test_transform_unscaled(void)
{
    static const uint32_t flips[] = {
        PVDC_PS_CTRL_REFLECT_X, PVDC_PS_CTRL_REFLECT_Y,
        PVDC_PS_CTRL_ROTATE_180,
        PVDC_PS_CTRL_REFLECT_X | PVDC_PS_CTRL_REFLECT_Y,
        PVDC_PS_CTRL_ROTATE_180 | PVDC_PS_CTRL_REFLECT_Y,
    };

    for (size_t f = 0; f < ARRAY_SIZE(flips); f++) {
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
            p->ctrl = flips[f] |
                      (bilinear ? PVDC_PS_CTRL_FILTER_BILINEAR : 0);
            ok(check_scene(&s, 0), "unscaled, ctrl 0x%x: exact", p->ctrl);
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
    p->src_x = (10 << 16) | 0x8000;
    p->src_y = (4 << 16) | 0x4000;
    p->src_w = 40 << 16;
    p->src_h = 30 << 16;
    p->dst_w = 40;
    p->dst_h = 30;
    ok(check_scene(&s, 0), "nearest, fractional source offset");

    /* a smooth picture, so bilinear rounding stays small */
    for (uint32_t y = 0; y < p->fb_height; y++) {
        for (uint32_t x = 0; x < p->fb_width; x++) {
            stl_le_p(vram + p->offset + y * p->pitch + x * 4,
                     (x * 4) << 16 | (y * 5) << 8 | ((x + y) * 2));
        }
    }
    p->ctrl = PVDC_PS_CTRL_FILTER_BILINEAR;
    ok(check_scene(&s, 2), "bilinear, fractional source offset");

    p->dst_w = 100;
    p->dst_h = 75;
    p->dst_x = 10;
    ok(check_scene(&s, 2), "bilinear 2.5x up, edges clamped to source");
    p->ctrl |= PVDC_PS_CTRL_ROTATE_180;
    ok(check_scene(&s, 2), "bilinear 2.5x up, rotated 180");
    p->src_w = 64 << 16;
    p->src_x = 0;
    p->dst_w = 16;
    p->dst_h = 12;
    ok(check_scene(&s, 2), "bilinear 4x down");

    /* coverage with translucent plane alpha through the strip path */
    *p = plane_new(PVDC_FMT_ARGB8888, 100, 80, 0, 0);
    p->src_w = 50 << 16;
    p->src_h = 40 << 16;
    p->dst_w = 100;
    p->dst_h = 80;
    p->alpha = 0x9000;
    p->ctrl = PVDC_BLEND_COVERAGE << PVDC_PS_CTRL_BLEND_SHIFT;
    ok(check_scene(&s, 2), "coverage, alpha 0x9000, 2x nearest, strips");
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
    s.planes[1] = plane_new(PVDC_FMT_XRGB8888, 100, 80, 0, 1 << 20);
    s.planes[1].zpos = 0;
    s.planes[2] = plane_new(PVDC_FMT_ABGR8888, 50, 50, 0, 2 << 20);
    s.planes[2].zpos = 2;
    s.planes[2].dst_x = -20;
    s.planes[2].dst_y = 40;
    s.planes[2].alpha = 0xc000;
    s.planes[2].ctrl = PVDC_BLEND_COVERAGE << PVDC_PS_CTRL_BLEND_SHIFT;
    s.planes[3] = plane_new(PVDC_FMT_RGB565, 40, 40, 0, 3 << 20);
    s.planes[3].zpos = 1;
    s.planes[3].dst_x = 30;
    s.planes[3].dst_y = -30;
    s.planes[3].alpha = 0x7000;
    ok(check_scene(&s, 3), "four planes drawn in zpos order, not array order");

    s.planes[1].dst_x = 200;
    ok(check_scene(&s, 3), "plane wholly off-screen is left out");
    s.planes[1].dst_x = -100;
    s.planes[1].dst_y = -80;
    ok(check_scene(&s, 3), "plane ending at the top-left corner is left out");
    s.planes[1].dst_x = -99;
    s.planes[1].dst_y = -79;
    ok(check_scene(&s, 3), "plane showing one pixel");

    s.num_planes = 0;
    ok(check_scene(&s, 0), "no plane: background only");
}

/* Compose with a damage rectangle over an older frame. */
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
    s.planes[1] = plane_new(PVDC_FMT_YUYV, 64, 40, 0, 1 << 20);
    s.planes[1].zpos = 1;
    s.planes[1].dst_w = 96;
    s.planes[1].dst_h = 60;
    s.planes[1].dst_x = 20;
    s.planes[1].dst_y = 10;
    s.planes[1].ctrl = PVDC_PS_CTRL_FILTER_BILINEAR;
    s.planes[2] = plane_new(PVDC_FMT_ARGB8888, 24, 24, 0, 2 << 20);
    s.planes[2].zpos = 2;
    s.planes[2].dst_x = 90;
    s.planes[2].dst_y = 70;
    s.planes[2].ctrl = PVDC_BLEND_PREMULTI << PVDC_PS_CTRL_BLEND_SHIFT;

    for (size_t i = 0; i < ARRAY_SIZE(rects); i++) {
        g_autofree uint32_t *ref = g_new(uint32_t, 128 * 96);
        g_autofree uint32_t *old = g_new(uint32_t, 128 * 96);
        pixman_image_t *img = frame_new(128, 96);

        for (int j = 0; j < 128 * 96; j++) {
            old[j] = g_rand_int(rng) & 0xffffff;
        }
        memcpy(pixman_image_get_data(img), old, 128 * 96 * 4);
        ref_compose(&s, ref);
        /* YUYV conversion and bilinear rounding add up */
        ok(pvdc_compose(&s, vram, VRAM_SIZE, img, &rects[i]) &&
           frames_match(img, ref, &rects[i], old, 4),
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
    pixman_image_t *img = frame_new(64, 64);
    pixman_image_t *small = frame_new(32, 64);
    const uint32_t *d = pixman_image_get_data(img);
    struct {
        const char *what;
        PVDCComposePlane p;
    } bad[16];
    int n = 0;

#define BAD(desc, field, value) do {                        \
        bad[n].what = desc;                                 \
        bad[n].p = good;                                    \
        bad[n].p.field = value;                             \
        n++;                                                \
    } while (0)
    BAD("offset past VRAM", offset, VRAM_SIZE + 64);
    BAD("last line one pixel past VRAM", offset, good.offset + 4);
    BAD("offset near 2^64", offset, UINT64_MAX - 63);
    BAD("pitch below width * cpp", pitch, 252);
    BAD("pitch not a multiple of 4", pitch, 258);
    BAD("huge pitch", pitch, 0xffffffc0);
    BAD("source past the fb width", src_x, 1 << 16);
    BAD("source past the fb height", src_h, 65 << 16);
    BAD("empty source", src_w, 0);
    BAD("empty destination", dst_h, 0);
    BAD("destination too far off-screen", dst_x, -100000);
    BAD("unknown format", format, 0x12345678);
    BAD("blend mode 3", ctrl, 3 << PVDC_PS_CTRL_BLEND_SHIFT);
    BAD("fb width 0", fb_width, 0);
    BAD("YUYV with odd width", format, PVDC_FMT_YUYV);
    bad[n - 1].p.fb_width = 63;
    bad[n - 1].p.src_w = 63 << 16;
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
    bool same;

    *p = plane_new(PVDC_FMT_XRGB8888, 80, 60, 64, 0);
    p->src_x = 9 << 16;
    p->src_y = 7 << 16;
    p->src_w = 70 << 16;
    p->src_h = 52 << 16;
    p->dst_x = -3;
    p->dst_y = -2;
    p->dst_w = 70;
    p->dst_h = 52;
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
    p->format = PVDC_FMT_XRGB8888;

    s.num_planes = 2;
    s.planes[1] = plane_new(PVDC_FMT_ARGB8888, 16, 16, 0, 1 << 20);
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
}

/*
 * Whatever part of VRAM is written, every pixel that changes lies inside
 * the rectangle pvdc_compose_plane_damage() gives, and redrawing that
 * rectangle alone gives the full new frame.
 */
static void test_plane_damage(void)
{
    const int w = 96, h = 72;
    pixman_image_t *before = frame_new(w, h), *after = frame_new(w, h);
    pixman_image_t *patched = frame_new(w, h);
    QemuRect r;
    int bad = 0, cases = 0, exact_ok;

    for (int iter = 0; iter < 400; iter++) {
        PVDCComposeScene s = {
            .width = w, .height = h, .num_planes = 1,
        };
        PVDCComposePlane *p = &s.planes[0];
        uint32_t format = formats[g_rand_int_range(rng, 0, 7)].fourcc;
        uint32_t fw = g_rand_int_range(rng, 1, 40) * 2;
        uint32_t fh = g_rand_int_range(rng, 1, 60);
        uint64_t bytes, start, len;
        const uint32_t *d0, *d1;
        bool hit;

        *p = plane_new(format, fw, fh, g_rand_int_range(rng, 0, 4) * 4, 0);
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

        bytes = (uint64_t)p->pitch * (fh - 1) + fw * ref_cpp(format);
        start = p->offset + g_rand_int_range(rng, -64, bytes);
        len = g_rand_boolean(rng) ? g_rand_int_range(rng, 1, 8) :
              g_rand_int_range(rng, 1, bytes);
        start = MIN(start, VRAM_SIZE - 1);
        len = MIN(len, VRAM_SIZE - start);

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

                if ((d0[y * w + x] ^ d1[y * w + x]) & 0xffffff && !in) {
                    if (!bad++) {
                        printf("# iteration %d: (%d,%d) changed outside "
                               "%d,%d %ux%u\n", iter, x, y, r.x, r.y,
                               r.width, r.height);
                    }
                }
            }
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
    ok(!bad, "damage rectangle holds every changed pixel (%d cases)", cases);

    /* unscaled planes get exact rectangles */
    {
        PVDCComposePlane p = plane_new(PVDC_FMT_XRGB8888, 50, 40, 56, 0);

        p.src_x = 4 << 16;
        p.src_y = 2 << 16;
        p.src_w = 40 << 16;
        p.src_h = 30 << 16;
        p.dst_w = 40;
        p.dst_h = 30;
        p.dst_x = 10;
        p.dst_y = 20;
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
        { 4, 1 }, { 1, 4 }, { 8, 1 },
    };
    int failures = 0, n = 300;

    for (int iter = 0; iter < n; iter++) {
        PVDCComposeScene s = {
            .width = g_rand_int_range(rng, 1, 120),
            .height = g_rand_int_range(rng, 1, 90),
            .background = g_rand_int(rng),
            .num_planes = g_rand_int_range(rng, 0, 5),
        };
        bool bilinear_any = false;

        for (unsigned int i = 0; i < s.num_planes; i++) {
            PVDCComposePlane *p = &s.planes[i];
            uint32_t format = formats[g_rand_int_range(rng, 0, 7)].fourcc;
            int rx = g_rand_int_range(rng, 0, ARRAY_SIZE(ratios));
            int ry = g_rand_int_range(rng, 0, ARRAY_SIZE(ratios));
            uint32_t sw = g_rand_int_range(rng, 1, 16) * 4;
            uint32_t sh = g_rand_int_range(rng, 1, 16) * 4;
            uint32_t fw = sw + g_rand_int_range(rng, 0, 4) * 2;
            uint32_t fh = sh + g_rand_int_range(rng, 0, 4);

            *p = plane_new(format, fw, fh, g_rand_int_range(rng, 0, 3) * 4,
                           (uint64_t)i << 20);
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
                bilinear_any = true;
            }
            if (i == 1 && g_rand_boolean(rng)) {
                plane_move(p, 4 << 20);     /* no longer flush with VRAM */
            }
        }
        quiet = failures > 0;
        if (!check_scene(&s, bilinear_any ? 4 : 3)) {
            if (!failures++) {
                printf("# random scene %d failed\n", iter);
            }
        }
        quiet = false;
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
    test_transform_unscaled();
    test_fractional_and_bilinear();
    test_zpos_and_clipping();
    test_damage();
    test_rejects();
    test_direct();
    test_crc();
    test_plane_damage();
    test_random();

    printf("# %u of %u compared pixels sat on a sampling boundary\n",
           ambiguous_total, compared_total);
    ok(ambiguous_total * 100 < compared_total,
       "less than 1%% of the pixels could not be compared strictly");
    printf("1..%u\n", tests_run);
    if (tests_failed) {
        printf("# %u of %u failed\n", tests_failed, tests_run);
    }
    g_rand_free(rng);
    return tests_failed ? 1 : 0;
}
