/*
 * pvdc: composition engine benchmark.
 *
 * Times pvdc_compose() on 1920x1080 scenes and reports each as a ratio
 * against one memcpy() of a 1920x1080 XRGB8888 frame measured in the same
 * run, interleaved with the scenes so that both see the same machine
 * state.  Every round times each scene once; the report gives the median
 * ratio over the rounds and its spread (10th..90th percentile).  A few
 * scenes are also compared with another one of the same round (their
 * "per" row): an upscale with a 2x one of the same destination, a colour
 * pipeline that changes nothing with none.  One scene is also composed
 * from scattered guest pages, as the device composes a binding whose
 * pages are not contiguous in the host: each plane fetched a band of
 * lines at a time, each line copied from its pages (pvdc-memory.c,
 * pvdc_memory_views()); and from a host view of the same pages mapped
 * again at consecutive addresses out of a memfd, as the device reads a
 * binding in memory-backend-memfd RAM.  The bytes copied per frame of
 * both are reported too.
 *
 *   compose-bench [--json] [rounds]
 *
 * With --json, the raw per-round ratios are printed as one JSON object
 * instead of the table (bench/run.py computes medians and spreads).
 *
 * Copyright (c) 2026 The pvdc authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include <math.h>
#include "pvdc-compose.h"

#define WIDTH           1920
#define HEIGHT          1080
#define FRAME_BYTES     (WIDTH * HEIGHT * 4)
#define VRAM_SIZE       (64 * 1024 * 1024)
#define MIB             (1024 * 1024)

typedef struct Scene {
    const char *name;
    const char *target;
    PVDCComposeScene scene;
    QemuRect damage;
    bool has_damage;
    /* also reported as time / time of scene @per (if per_row is set) */
    int per;
    const char *per_row;
    const char *per_target;
} Scene;

static uint8_t *vram;

/*
 * Guest pages bound in a random order: byte a of the device address
 * space is byte a % PAGE of page page_of[a / PAGE] of @vram, as a
 * binding of one entry per page that the host has scattered.
 */
#define PAGE            4096
static uint32_t *page_of;

/*
 * The same pages, in the same order, mapped at consecutive addresses out
 * of a memfd holding a copy of @vram (pvdc-memory.c, pvdc_binding_view()).
 */
static uint8_t *memfd_view;

static void memfd_view_init(void)
{
    int fd = memfd_create("pvdc-compose-bench", MFD_CLOEXEC);
    uint8_t *file;

    if (fd < 0 || ftruncate(fd, VRAM_SIZE) < 0) {
        perror("memfd");
        exit(1);
    }
    file = mmap(NULL, VRAM_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    memfd_view = mmap(NULL, VRAM_SIZE, PROT_NONE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (file == MAP_FAILED || memfd_view == MAP_FAILED) {
        perror("mmap");
        exit(1);
    }
    memcpy(file, vram, VRAM_SIZE);
    munmap(file, VRAM_SIZE);
    for (uint32_t i = 0; i < VRAM_SIZE / PAGE; i++) {
        if (mmap(memfd_view + (uint64_t)i * PAGE, PAGE, PROT_READ,
                 MAP_SHARED | MAP_FIXED, fd,
                 (off_t)page_of[i] * PAGE) == MAP_FAILED) {
            perror("mmap of a page");
            exit(1);
        }
    }
    close(fd);
}

/* Copy [@addr, @addr + @len) of the binding to @dst, page by page. */
static void scattered_copy(uint64_t addr, uint64_t len, uint8_t *dst)
{
    /* Each pass copies up to the end of a page: bounded by @len. */
    while (len) {
        uint64_t n = MIN(len, PAGE - addr % PAGE);

        memcpy(dst, vram + (uint64_t)page_of[addr / PAGE] * PAGE + addr % PAGE,
               n);
        dst += n;
        addr += n;
        len -= n;
    }
}

/* Bytes the fetches below copied. */
static uint64_t copied_bytes;

/*
 * PVDCComposeFetchFn of the binding, as the device's: bytes within one
 * page straight from it, else copied.
 */
static const uint8_t *scattered_fetch(void *opaque, uint64_t offset,
                                      uint64_t len, uint8_t *copy)
{
    if (!copy) {
        return offset / PAGE == (offset + len - 1) / PAGE ?
               vram + (uint64_t)page_of[offset / PAGE] * PAGE +
               offset % PAGE : NULL;
    }
    scattered_copy(offset, len, copy);
    copied_bytes += len;
    return copy;
}

/* Compose @scene from the scattered pages as the device does. */
static bool compose_scattered(const PVDCComposeScene *scene,
                              pixman_image_t *dst)
{
    PVDCComposeScene sc = *scene;

    for (unsigned int i = 0; i < sc.num_planes; i++) {
        PVDCComposePlane *p = &sc.planes[i];

        p->fetch = scattered_fetch;
        p->mem_size = VRAM_SIZE;
        if (pvdc_compose_format(p->format)->chroma_cpp) {
            p->chroma_fetch = scattered_fetch;
            p->chroma_mem_size = VRAM_SIZE;
        }
    }
    return pvdc_compose(&sc, vram, VRAM_SIZE, dst, NULL);
}

/*
 * Compose @scene from the memfd view of the scattered pages as the
 * device does: straight from it, as from contiguous memory.
 */
static bool compose_memfd_view(const PVDCComposeScene *scene,
                               pixman_image_t *dst)
{
    PVDCComposeScene sc = *scene;

    for (unsigned int i = 0; i < sc.num_planes; i++) {
        sc.planes[i].mem = memfd_view;
        sc.planes[i].mem_size = VRAM_SIZE;
        if (pvdc_compose_format(sc.planes[i].format)->chroma_cpp) {
            sc.planes[i].chroma_mem = memfd_view;
            sc.planes[i].chroma_mem_size = VRAM_SIZE;
        }
    }
    return pvdc_compose(&sc, vram, VRAM_SIZE, dst, NULL);
}

/*
 * CPU time of this thread: on a machine shared with builds, a scene
 * preempted halfway would otherwise be charged for the time others ran.
 */
static int64_t now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static PVDCComposePlane plane(uint32_t format, unsigned int cpp,
                              uint64_t offset, uint32_t sw, uint32_t sh,
                              int32_t dx, int32_t dy, uint32_t dw,
                              uint32_t dh, uint32_t zpos, uint32_t ctrl)
{
    PVDCComposePlane p = {
        .format = format,
        .offset = offset,
        .pitch = ROUND_UP(sw * cpp, 64),
        .fb_width = sw,
        .fb_height = sh,
        .src_w = sw << 16,
        .src_h = sh << 16,
        .dst_x = dx,
        .dst_y = dy,
        .dst_w = dw,
        .dst_h = dh,
        .zpos = zpos,
        .alpha = 0xffff,
        .ctrl = ctrl,
    };

    return p;
}

static PVDCComposePlane primary(void)
{
    return plane(PVDC_FMT_XRGB8888, 4, 0, WIDTH, HEIGHT, 0, 0, WIDTH, HEIGHT,
                 0, 0);
}

/* A two-plane YCbCr framebuffer at @offset, its Cb:Cr plane 8 MiB on. */
static PVDCComposePlane yuv420(uint32_t format, unsigned int cpp,
                               uint64_t offset, uint32_t sw, uint32_t sh,
                               uint32_t ctrl)
{
    PVDCComposePlane p = plane(format, cpp, offset, sw, sh, 0, 0, WIDTH,
                               HEIGHT, 1, ctrl);

    p.chroma_offset = offset + 8 * MIB;
    p.chroma_pitch = ROUND_UP(DIV_ROUND_UP(sw, 2) * 2 * cpp, 64);
    p.encoding = PVDC_COMPOSE_BT709;
    return p;
}

static PVDCComposePlane cursor(int32_t x, int32_t y, uint32_t zpos)
{
    return plane(PVDC_FMT_ARGB8888, 4, 60 * MIB, 64, 64, x, y, 64, 64, zpos,
                 PVDC_BLEND_PREMULTI << PVDC_PS_CTRL_BLEND_SHIFT);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

static double percentile(double *v, int n, int pct)
{
    return v[MIN(n - 1, n * pct / 100)];
}

/*
 * Per scene: its target and the ratio and milliseconds of every round.
 * "full" names the scene a damaged one recomposes a part of.
 */
/*
 * Bytes copied per frame to compose a scene from guest pages, one row
 * for each way of reading them, as the device counts them in
 * x-bounce-bytes.
 */
typedef struct Copied {
    const char *name;
    const char *target;
    uint64_t bytes;             /* of the last round; the same every round */
} Copied;

static void print_json(const Scene *scenes, int n, int rounds,
                       const double *ratio, const double *ms, int damaged,
                       int full, size_t copy_bytes, const Copied *copied,
                       int n_copied)
{
    printf("{\"rounds\": %d, \"copy_bytes\": %zu, \"copied\": [\n",
           rounds, copy_bytes);
    for (int i = 0; i < n_copied; i++) {
        printf("  {\"name\": \"%s\", \"target\": \"%s\", "
               "\"bytes\": %" PRIu64 "}%s\n", copied[i].name,
               copied[i].target, copied[i].bytes,
               i + 1 < n_copied ? "," : "");
    }
    printf("], \"scenes\": [\n");
    for (int i = 0; i < n; i++) {
        printf("  {\"name\": \"%s\", \"target\": \"%s\"", scenes[i].name,
               scenes[i].target ? scenes[i].target : "");
        if (i == damaged) {
            printf(", \"full\": \"%s\"", scenes[full].name);
        }
        if (scenes[i].per_row) {
            printf(",\n   \"per\": {\"scene\": \"%s\", \"row\": \"%s\", "
                   "\"target\": \"%s\"}", scenes[scenes[i].per].name,
                   scenes[i].per_row, scenes[i].per_target);
        }
        printf(",\n   \"ratio\": [");
        for (int r = 0; r < rounds; r++) {
            printf("%s%.4f", r ? ", " : "", ratio[i * rounds + r]);
        }
        printf("],\n   \"ms\": [");
        for (int r = 0; r < rounds; r++) {
            printf("%s%.4f", r ? ", " : "", ms[i * rounds + r]);
        }
        printf("]}%s\n", i + 1 < n ? "," : "");
    }
    printf("]}\n");
}

int main(int argc, char **argv)
{
    const uint32_t premulti = PVDC_BLEND_PREMULTI << PVDC_PS_CTRL_BLEND_SHIFT;
    const uint32_t coverage = PVDC_BLEND_COVERAGE << PVDC_PS_CTRL_BLEND_SHIFT;
    const uint32_t bilinear = PVDC_PS_CTRL_FILTER_BILINEAR;
    bool json = argc > 1 && !strcmp(argv[1], "--json");
    int rounds = argc > 1 + json ? atoi(argv[1 + json]) : 31;
    Scene scenes[32];
    int n = 0, scaled, damaged, up2, primary_only;
    g_autofree PVDCComposeLutEntry *lut = g_new(PVDCComposeLutEntry,
                                                PVDC_LUT_MAX_SIZE);
    /* a saturation boost: each row sums to 1 */
    const uint64_t ctm[9] = {
        0x140000000ull, 0x8000000020000000ull, 0x8000000020000000ull,
        0x8000000020000000ull, 0x140000000ull, 0x8000000020000000ull,
        0x8000000020000000ull, 0x8000000020000000ull, 0x140000000ull,
    };
    PVDCComposeColorDesc full_desc = {
        .degamma = lut, .degamma_size = PVDC_LUT_MAX_SIZE,
        .ctm = ctm, .gamma = lut, .gamma_size = PVDC_LUT_MAX_SIZE,
    };
    PVDCComposeColorDesc gamma_desc = {
        .gamma = lut, .gamma_size = PVDC_LUT_MAX_SIZE,
    };
    PVDCComposeColorDesc identity_desc = {
        .gamma = lut, .gamma_size = 2,
    };
    g_autoptr(PVDCComposeColor) full_color = NULL;
    g_autoptr(PVDCComposeColor) gamma_color = NULL;
    g_autoptr(PVDCComposeColor) identity_color = NULL;
    uint32_t crc = 0;
    uint8_t *copy_src, *copy_dst;
    pixman_image_t *dst, *wb_argb, *wb_abgr, *tiny;
    /* operations timed after the scenes in every round, in this order */
    static const struct {
        const char *name;
        const char *target;
    } extra[] = {
        { "pvdc_compose_crc32() of a frame", "" },
        { "writeback of a frame: XRGB8888 to ARGB8888", "" },
        { "writeback of a frame: XRGB8888 to ABGR8888", "" },
        { "pvdc_compose_color_new(): DEGAMMA, CTM, GAMMA (4096)", "" },
        { "primary, first composition with that new pipeline", "" },
        /*
         * What the first CRC read after a change of the pipeline pays
         * besides its pixels, which may cost 200 us in all: a memcpy of
         * the frame takes about 1 ms here, a CRC read about 70 us.
         */
        { "first use of another new pipeline: its gamma tables (1x1 frame)",
          "<= 0.13" },
        /* issue 33: from guest RAM that is not contiguous in the host */
        { "primary + 2 scaled overlays + cursor, from scattered guest pages",
          "<= 4" },
        { "same, from a memfd host view of those pages", "<= 4" },
    };
    Copied copied[] = {
        { "bytes copied per frame, scaled scene, scattered guest pages",
          "", 0 },
        { "bytes copied per frame, scaled scene, memfd host view", "== 0",
          0 },
    };
    uint32_t crc_scattered = 0, crc_view = 0;
    double *ratio, *ms, *per;

    vram = g_malloc(VRAM_SIZE);
    for (size_t i = 0; i < VRAM_SIZE / 4; i++) {
        ((uint32_t *)vram)[i] = g_random_int();
    }
    page_of = g_new(uint32_t, VRAM_SIZE / PAGE);
    for (uint32_t i = 0; i < VRAM_SIZE / PAGE; i++) {
        page_of[i] = i;
    }
    for (uint32_t i = VRAM_SIZE / PAGE - 1; i > 0; i--) {
        uint32_t j = g_random_int_range(0, i + 1), t = page_of[i];

        page_of[i] = page_of[j];
        page_of[j] = t;
    }
    memfd_view_init();
    copy_src = g_malloc(FRAME_BYTES);
    copy_dst = g_malloc(FRAME_BYTES);
    memset(copy_src, 1, FRAME_BYTES);
    memset(copy_dst, 2, FRAME_BYTES);
    dst = pixman_image_create_bits(PIXMAN_x8r8g8b8, WIDTH, HEIGHT, NULL,
                                   WIDTH * 4);
    /* writeback targets as the device writes them: opaque, with alpha */
    wb_argb = pixman_image_create_bits(PIXMAN_LE_a8r8g8b8, WIDTH, HEIGHT,
                                       NULL, WIDTH * 4);
    tiny = pixman_image_create_bits(PIXMAN_x8r8g8b8, 1, 1, NULL, 4);
    wb_abgr = pixman_image_create_bits(PIXMAN_LE_a8b8g8r8, WIDTH, HEIGHT,
                                       NULL, WIDTH * 4);
    /* a 2.2 power curve: a LUT of the largest size */
    for (int i = 0; i < PVDC_LUT_MAX_SIZE; i++) {
        double v = pow(i / (PVDC_LUT_MAX_SIZE - 1.0), 2.2);

        lut[i].red = lut[i].green = lut[i].blue = lround(v * 0xffff);
    }
    full_color = pvdc_compose_color_new(&full_desc);
    gamma_color = pvdc_compose_color_new(&gamma_desc);
    lut[0] = (PVDCComposeLutEntry) { 0, 0, 0, 0 };
    lut[1] = (PVDCComposeLutEntry) { 0xffff, 0xffff, 0xffff, 0 };
    identity_color = pvdc_compose_color_new(&identity_desc);

    primary_only = n;
    scenes[n++] = (Scene) {
        .name = "primary only",
        .target = "~1",
        .scene = { WIDTH, HEIGHT, 0, 1, { primary() } },
    };
    scenes[n++] = (Scene) {
        .name = "primary + cursor",
        .target = "",
        .scene = { WIDTH, HEIGHT, 0, 2, { primary(), cursor(1000, 500, 1) } },
    };
    scenes[n++] = (Scene) {
        .name = "primary + 2 unscaled overlays + cursor",
        .target = "<= 2",
        .scene = { WIDTH, HEIGHT, 0, 4, {
            primary(),
            plane(PVDC_FMT_XRGB8888, 4, 16 * MIB, 640, 480, 100, 100,
                  640, 480, 1, 0),
            plane(PVDC_FMT_ARGB8888, 4, 24 * MIB, 640, 480, 900, 400,
                  640, 480, 2, premulti),
            cursor(1000, 500, 3),
        } },
    };
    scaled = n;
    scenes[n++] = (Scene) {
        .name = "primary + 2 scaled overlays + cursor",
        .target = "<= 4",
        .scene = { WIDTH, HEIGHT, 0, 4, {
            primary(),
            /* video-like: 640x360 shown at 1280x720, filtered */
            plane(PVDC_FMT_XRGB8888, 4, 16 * MIB, 640, 360, 80, 60,
                  1280, 720, 1, bilinear),
            /* a picture-in-picture shrunk 2x, blended */
            plane(PVDC_FMT_ARGB8888, 4, 24 * MIB, 800, 600, 1400, 600,
                  400, 300, 2, premulti),
            cursor(1000, 500, 3),
        } },
    };
    scenes[n++] = (Scene) {
        .name = "primary + 4 alpha-blended 960x540 overlays",
        .target = "",
        .scene = { WIDTH, HEIGHT, 0, 5, {
            primary(),
            plane(PVDC_FMT_ARGB8888, 4, 16 * MIB, 960, 540, 0, 0,
                  960, 540, 1, premulti),
            plane(PVDC_FMT_ARGB8888, 4, 20 * MIB, 960, 540, 960, 0,
                  960, 540, 2, coverage),
            plane(PVDC_FMT_ABGR8888, 4, 24 * MIB, 960, 540, 0, 540,
                  960, 540, 3, premulti),
            plane(PVDC_FMT_ARGB8888, 4, 28 * MIB, 960, 540, 480, 270,
                  960, 540, 4, premulti),
        } },
    };
    scenes[n] = scenes[n - 1];
    scenes[n].name = "same, overlays at plane alpha 0x8000";
    for (int i = 1; i < 5; i++) {
        scenes[n].scene.planes[i].alpha = 0x8000;
    }
    n++;
    damaged = n;
    scenes[n] = scenes[scaled];
    scenes[n].name = "scaled scene, 64x64 damage (cursor move)";
    scenes[n].target = "";
    scenes[n].damage = (QemuRect) { 990, 490, 64, 64 };
    scenes[n].has_damage = true;
    n++;
    scenes[n++] = (Scene) {
        .name = "YUYV 1280x720 -> full screen, bilinear",
        .target = "",
        .scene = { WIDTH, HEIGHT, 0, 2, {
            plane(PVDC_FMT_YUYV, 2, 16 * MIB, 1280, 720, 0, 0,
                  WIDTH, HEIGHT, 1, bilinear),
            cursor(1000, 500, 3),
        } },
    };
    scenes[n++] = (Scene) {
        .name = "primary + unscaled YUYV 1280x720 overlay",
        .target = "",
        .scene = { WIDTH, HEIGHT, 0, 2, {
            primary(),
            plane(PVDC_FMT_YUYV, 2, 16 * MIB, 1280, 720, 320, 180,
                  1280, 720, 1, 0),
        } },
    };
    scenes[n++] = (Scene) {
        .name = "RGB565 primary + XRGB2101010 overlay",
        .target = "",
        .scene = { WIDTH, HEIGHT, 0, 2, {
            plane(PVDC_FMT_RGB565, 2, 0, WIDTH, HEIGHT, 0, 0, WIDTH, HEIGHT,
                  0, 0),
            plane(PVDC_FMT_XRGB2101010, 4, 16 * MIB, 640, 480, 200, 200,
                  640, 480, 1, 0),
        } },
    };

    /* upscaling costs at most what its destination does, whatever the ratio */
    up2 = n;
    scenes[n++] = (Scene) {
        .name = "XRGB8888 960x540 -> full screen (2x), bilinear",
        .target = "<= 4",
        .scene = { WIDTH, HEIGHT, 0, 1, {
            plane(PVDC_FMT_XRGB8888, 4, 16 * MIB, 960, 540, 0, 0,
                  WIDTH, HEIGHT, 0, bilinear),
        } },
    };
    scenes[n++] = (Scene) {
        .name = "XRGB8888 20x20 -> full screen (96x54), bilinear",
        .target = "<= 4",
        .scene = { WIDTH, HEIGHT, 0, 1, {
            plane(PVDC_FMT_XRGB8888, 4, 16 * MIB, 20, 20, 0, 0,
                  WIDTH, HEIGHT, 0, bilinear),
        } },
        .per = up2,
        .per_row = "upscale 96x54 / 2x, same destination, bilinear",
        .per_target = "~1",
    };
    scenes[n++] = (Scene) {
        .name = "NV12 20x20 -> full screen (96x54), nearest",
        .target = "<= 4",
        .scene = { WIDTH, HEIGHT, 0, 1, {
            yuv420(PVDC_FMT_NV12, 1, 16 * MIB, 20, 20, 0),
        } },
    };

    /* video overlays over a primary they hide */
    scenes[n++] = (Scene) {
        .name = "NV12 1920x1080 overlay, full screen",
        .target = "<= 4",
        .scene = { WIDTH, HEIGHT, 0, 2, {
            primary(),
            yuv420(PVDC_FMT_NV12, 1, 16 * MIB, WIDTH, HEIGHT, 0),
        } },
    };
    scenes[n++] = (Scene) {
        .name = "NV12 1280x720 overlay -> full screen, bilinear",
        .target = "",
        .scene = { WIDTH, HEIGHT, 0, 2, {
            primary(),
            yuv420(PVDC_FMT_NV12, 1, 16 * MIB, 1280, 720, bilinear),
        } },
    };
    scenes[n++] = (Scene) {
        .name = "NV12 1280x720 overlay -> full screen, nearest",
        .target = "",
        .scene = { WIDTH, HEIGHT, 0, 2, {
            primary(),
            yuv420(PVDC_FMT_NV12, 1, 16 * MIB, 1280, 720, 0),
        } },
    };
    scenes[n++] = (Scene) {
        .name = "P010 1920x1080 overlay, full screen",
        .target = "<= 4",
        .scene = { WIDTH, HEIGHT, 0, 2, {
            primary(),
            yuv420(PVDC_FMT_P010, 2, 16 * MIB, WIDTH, HEIGHT, 0),
        } },
    };

    /* the colour pipeline of the head, after blending */
    scenes[n] = scenes[primary_only];
    scenes[n].name = "primary + identity colour pipeline";
    scenes[n].target = "~1";
    scenes[n].scene.color = identity_color;
    scenes[n].per = primary_only;
    scenes[n].per_row = "identity colour pipeline / none";
    scenes[n].per_target = "~1";
    n++;
    scenes[n] = scenes[primary_only];
    scenes[n].name = "primary + GAMMA_LUT (4096)";
    scenes[n].target = "<= 6";
    scenes[n].scene.color = gamma_color;
    n++;
    scenes[n] = scenes[primary_only];
    scenes[n].name = "primary + DEGAMMA_LUT, CTM, GAMMA_LUT (4096)";
    scenes[n].target = "<= 20";
    scenes[n].scene.color = full_color;
    n++;

    ratio = g_new(double, (size_t)(n + ARRAY_SIZE(extra)) * rounds);
    ms = g_new(double, (size_t)(n + ARRAY_SIZE(extra)) * rounds);
    for (int r = -2; r < rounds; r++) {
        int64_t t0, t_copy, t[ARRAY_SIZE(extra)];
        PVDCComposeColor *color;

        t0 = now_ns();
        memcpy(copy_dst, copy_src, FRAME_BYTES);
        t_copy = now_ns() - t0;
        for (int i = 0; i < n; i++) {
            int64_t ti;

            t0 = now_ns();
            if (!pvdc_compose(&scenes[i].scene, vram, VRAM_SIZE, dst,
                              scenes[i].has_damage ? &scenes[i].damage :
                              NULL)) {
                fprintf(stderr, "scene '%s' rejected\n", scenes[i].name);
                return 1;
            }
            ti = now_ns() - t0;
            if (r >= 0) {       /* the first rounds only warm up */
                ratio[i * rounds + r] = (double)ti / t_copy;
                ms[i * rounds + r] = ti / 1e6;
            }
        }

        /* CRC capture: the checksum of the frame just composed */
        t0 = now_ns();
        crc ^= pvdc_compose_crc32(dst);
        t[0] = now_ns() - t0;
        /* writeback: the composed frame converted into the target */
        t0 = now_ns();
        pixman_image_composite32(PIXMAN_OP_SRC, dst, NULL, wb_argb, 0, 0,
                                 0, 0, 0, 0, WIDTH, HEIGHT);
        t[1] = now_ns() - t0;
        t0 = now_ns();
        pixman_image_composite32(PIXMAN_OP_SRC, dst, NULL, wb_abgr, 0, 0,
                                 0, 0, 0, 0, WIDTH, HEIGHT);
        t[2] = now_ns() - t0;
        /*
         * A commit that changes the colour pipeline, then the first
         * composition with it: what the device pays inside the guest's
         * register write, then at the next refresh.
         */
        t0 = now_ns();
        color = pvdc_compose_color_new(&full_desc);
        t[3] = now_ns() - t0;
        scenes[n] = scenes[primary_only];
        scenes[n].scene.color = color;
        t0 = now_ns();
        pvdc_compose(&scenes[n].scene, vram, VRAM_SIZE, dst, NULL);
        t[4] = now_ns() - t0;
        pvdc_compose_color_free(color);
        color = pvdc_compose_color_new(&full_desc);
        t0 = now_ns();
        pvdc_compose(&(PVDCComposeScene) { .width = 1, .height = 1,
                                           .color = color },
                     vram, VRAM_SIZE, tiny, NULL);
        t[5] = now_ns() - t0;
        pvdc_compose_color_free(color);
        copied_bytes = 0;
        t0 = now_ns();
        if (!compose_scattered(&scenes[scaled].scene, dst)) {
            fprintf(stderr, "scattered scene rejected\n");
            return 1;
        }
        t[6] = now_ns() - t0;
        copied[0].bytes = copied_bytes;
        crc_scattered = pvdc_compose_crc32(dst);
        copied_bytes = 0;
        t0 = now_ns();
        if (!compose_memfd_view(&scenes[scaled].scene, dst)) {
            fprintf(stderr, "scene from the memfd view rejected\n");
            return 1;
        }
        t[7] = now_ns() - t0;
        copied[1].bytes = copied_bytes;
        crc_view = pvdc_compose_crc32(dst);
        /* the same pages, the same picture */
        if (crc_view != crc_scattered) {
            fprintf(stderr, "scattered pages and their memfd view differ\n");
            return 1;
        }
        for (int i = 0; r >= 0 && i < ARRAY_SIZE(extra); i++) {
            ratio[(n + i) * rounds + r] = (double)t[i] / t_copy;
            ms[(n + i) * rounds + r] = t[i] / 1e6;
        }
    }
    for (int i = 0; i < ARRAY_SIZE(extra); i++) {
        scenes[n++] = (Scene) { .name = extra[i].name,
                                .target = extra[i].target };
    }

    if (json) {
        print_json(scenes, n, rounds, ratio, ms, damaged, scaled, FRAME_BYTES,
                   copied, ARRAY_SIZE(copied));
        goto out;
    }
    /* the "per" rows, from the unsorted rounds */
    per = g_new(double, (size_t)n * rounds);
    for (int i = 0; i < n; i++) {
        for (int r = 0; scenes[i].per_row && r < rounds; r++) {
            per[i * rounds + r] = ms[i * rounds + r] /
                                  ms[scenes[i].per * rounds + r];
        }
    }
    printf("%-50s %8s %15s %9s %7s\n", "scene (1920x1080)", "ratio",
           "p10..p90", "ms", "target");
    for (int i = 0; i < n; i++) {
        double *rv = &ratio[i * rounds], *mv = &ms[i * rounds];

        qsort(rv, rounds, sizeof(double), cmp_double);
        qsort(mv, rounds, sizeof(double), cmp_double);
        printf("%-50s %8.2f %6.2f..%-7.2f %9.3f %7s\n", scenes[i].name,
               percentile(rv, rounds, 50), percentile(rv, rounds, 10),
               percentile(rv, rounds, 90), percentile(mv, rounds, 50),
               scenes[i].target);
    }
    printf("ratios: time / one %d-byte memcpy in the same round, "
           "%d rounds (crc %08x)\n", FRAME_BYTES, rounds, crc);
    for (int i = 0; i < ARRAY_SIZE(copied); i++) {
        printf("%-62s %10" PRIu64 " %7s\n", copied[i].name, copied[i].bytes,
               copied[i].target);
    }
    for (int i = 0; i < n; i++) {
        double *pv = &per[i * rounds];

        if (!scenes[i].per_row) {
            continue;
        }
        qsort(pv, rounds, sizeof(double), cmp_double);
        printf("%-50s %8.2f %6.2f..%-7.2f %9s %7s\n", scenes[i].per_row,
               percentile(pv, rounds, 50), percentile(pv, rounds, 10),
               percentile(pv, rounds, 90), "", scenes[i].per_target);
    }
    g_free(per);

out:
    g_free(ratio);
    g_free(ms);
    pixman_image_unref(dst);
    pixman_image_unref(wb_argb);
    pixman_image_unref(wb_abgr);
    pixman_image_unref(tiny);
    g_free(copy_src);
    g_free(copy_dst);
    munmap(memfd_view, VRAM_SIZE);
    g_free(page_of);
    g_free(vram);
    return 0;
}
