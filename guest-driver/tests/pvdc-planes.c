// SPDX-License-Identifier: GPL-2.0-or-later OR MIT
/*
 * pvdc-planes: what planes show, by frame CRC against XRGB8888 planes that
 * hold the pixels expected, and what the driver refuses before the device
 * sees it.  On the first connected head:
 *
 *   ycbcr     An overlay shows NV12 (Y and Cb:Cr in one buffer object),
 *             P010 (in two, the Cb:Cr plane at an offset into its own) and
 *             YUYV framebuffers of random samples, odd-sized for the
 *             two-plane formats, for each COLOR_ENCODING and COLOR_RANGE;
 *             each CRC equals that of an XRGB8888 framebuffer of the same
 *             geometry holding the conversion of pvdc-ycbcr.h, and the
 *             encodings and ranges give different CRCs.
 *   upscale   A 20x20 framebuffer scaled to the whole mode, on the primary
 *             plane and on an overlay, commits; a solid one has the CRC of
 *             a full-screen solid framebuffer, and a pattern with nearest
 *             filtering that of the full-screen picture the spec's
 *             sampling predicts.
 *   bandwidth An NV12 and a P010 overlay that need just the bandwidth the
 *             head has left (1.5 and 3 bytes per source pixel, in KiB
 *             rounded up) commit; one line more is refused by TEST_ONLY.
 *   properties Blending properties (alpha, pixel blend mode) on the primary
 *             and overlay planes, not on the cursor; zpos mutable on them,
 *             immutable on the cursor; SIZE_HINTS on the cursor only.
 *   pitch     A 72x72 NV12 framebuffer of pitch 72 (both planes) is
 *             taken by ADDFB2 and commits on every plane that lists NV12.
 *   refusals  A pitch or offset the device does not take (misaligned),
 *             YUYV of an odd width: refused with EINVAL by ADDFB2; the
 *             Cb:Cr plane outside its buffer object, NV12 on the primary
 *             or the cursor plane: by ADDFB2 or by a TEST_ONLY commit; and
 *             no plane or head register of the device changes (read
 *             through BAR 0: boot with iomem=relaxed).
 *
 * Usage: pvdc-planes [-d DEBUGFS-DIR] [-c DEVICE] [TEST...]; every test
 * when none is named (bandwidth and refusals read BAR 0); debugfs must be mounted (default
 * /sys/kernel/debug/dri/0, DEVICE /dev/dri/card0).
 */
#include <inttypes.h>
#include <poll.h>

#include "pvdc-kms-util.h"
#include "pvdc-regs.h"
#include "pvdc-ycbcr.h"

#define TEST_ONLY	DRM_MODE_ATOMIC_TEST_ONLY
#define MODESET		DRM_MODE_ATOMIC_ALLOW_MODESET
#define PLANE		DRM_MODE_OBJECT_PLANE

/* The YCbCr overlay: odd sizes, away from the head's edges. */
#define YUV_X		37
#define YUV_Y		29
#define YUV_W		301
#define YUV_H		203
#define TINY		20

static struct kms_display d;
static struct kms_head *head;
static uint32_t overlay;
static const char *debugfs = KMS_DEBUGFS;

/* ------------------------------------------------------------------------ */
/* Framebuffers of one or two buffer objects                                */
/* ------------------------------------------------------------------------ */

struct bo {
	uint32_t handle, pitch;
	uint64_t size;
	uint8_t *map;
};

struct fb {
	uint32_t id, width, height, format;
	struct bo bo[2];
	unsigned int num_bos;
	uint8_t *plane[2];		/* first byte of the Y and Cb:Cr planes */
	uint32_t pitch[2];
};

/* A dumb buffer of @h lines of @w pixels of @bpp bits, mapped. */
static int bo_create(struct bo *bo, uint32_t w, uint32_t h, uint32_t bpp)
{
	struct drm_mode_create_dumb create = {
		.width = w, .height = h, .bpp = bpp,
	};
	struct drm_mode_map_dumb map = { 0 };
	void *p;

	memset(bo, 0, sizeof(*bo));
	if (drmIoctl(d.fd, DRM_IOCTL_MODE_CREATE_DUMB, &create))
		return -errno;
	bo->handle = create.handle;
	bo->pitch = create.pitch;
	bo->size = create.size;
	map.handle = bo->handle;
	if (drmIoctl(d.fd, DRM_IOCTL_MODE_MAP_DUMB, &map))
		return -errno;
	p = mmap(NULL, bo->size, PROT_READ | PROT_WRITE, MAP_SHARED, d.fd,
		 map.offset);
	if (p == MAP_FAILED)
		return -errno;
	bo->map = p;
	return 0;
}

static void bo_destroy(struct bo *bo)
{
	struct drm_mode_destroy_dumb destroy = { .handle = bo->handle };

	if (bo->map)
		munmap(bo->map, bo->size);
	if (bo->handle)
		drmIoctl(d.fd, DRM_IOCTL_MODE_DESTROY_DUMB, &destroy);
	memset(bo, 0, sizeof(*bo));
}

/*
 * ADDFB2 of @f's buffer objects: plane i in bo[@in[i]] at @offsets[i] with
 * @pitches[i]; 0 or -errno.
 */
static int fb_add(struct fb *f, uint32_t w, uint32_t h, uint32_t format,
		  unsigned int planes, const unsigned int in[2],
		  const uint32_t offsets[2], const uint32_t pitches[2])
{
	uint32_t handles[4] = { 0 }, p[4] = { 0 }, o[4] = { 0 };
	unsigned int i;

	f->width = w;
	f->height = h;
	f->format = format;
	for (i = 0; i < planes; i++) {
		handles[i] = f->bo[in[i]].handle;
		p[i] = pitches[i];
		o[i] = offsets[i];
		f->plane[i] = f->bo[in[i]].map + offsets[i];
		f->pitch[i] = pitches[i];
	}
	if (drmModeAddFB2(d.fd, w, h, format, handles, p, o, &f->id, 0))
		return -errno;
	return 0;
}

static void fb_destroy(struct fb *f)
{
	unsigned int i;

	if (f->id)
		drmModeRmFB(d.fd, f->id);
	for (i = 0; i < f->num_bos; i++)
		bo_destroy(&f->bo[i]);
	memset(f, 0, sizeof(*f));
}

/* XRGB8888, one buffer object. */
static int fb_xrgb(struct fb *f, uint32_t w, uint32_t h)
{
	static const unsigned int in[2];
	uint32_t offsets[2] = { 0 }, pitches[2];
	int ret;

	memset(f, 0, sizeof(*f));
	f->num_bos = 1;
	ret = bo_create(&f->bo[0], w, h, 32);
	if (ret)
		return ret;
	pitches[0] = f->bo[0].pitch;
	return fb_add(f, w, h, DRM_FORMAT_XRGB8888, 1, in, offsets, pitches);
}

/* XRGB8888 of @pitch bytes a line, one buffer object; the ADDFB2 result. */
static int fb_xrgb_pitch(struct fb *f, uint32_t w, uint32_t h, uint32_t pitch)
{
	static const unsigned int in[2];
	uint32_t offsets[2] = { 0 }, pitches[2] = { pitch };
	int ret;

	memset(f, 0, sizeof(*f));
	f->num_bos = 1;
	ret = bo_create(&f->bo[0], pitch / 4 + 1, h, 32);
	if (ret)
		return ret;
	return fb_add(f, w, h, DRM_FORMAT_XRGB8888, 1, in, offsets, pitches);
}

static uint32_t *xrgb_pixel(struct fb *f, uint32_t x, uint32_t y)
{
	return (uint32_t *)(f->plane[0] + (size_t)y * f->pitch[0]) + x;
}

/*
 * A YCbCr framebuffer: NV12 with its Cb:Cr plane after the Y plane in one
 * buffer object, P010 with it one line into a second one, YUYV.
 */
static int fb_ycbcr(struct fb *f, uint32_t w, uint32_t h, uint32_t format)
{
	uint32_t cw = (w + 1) / 2, ch = (h + 1) / 2;
	uint32_t offsets[2] = { 0 }, pitches[2];
	unsigned int in[2] = { 0, 0 };
	int ret;

	memset(f, 0, sizeof(*f));
	switch (format) {
	case DRM_FORMAT_NV12:
		f->num_bos = 1;
		ret = bo_create(&f->bo[0], 2 * cw, h + ch, 8);
		pitches[0] = pitches[1] = f->bo[0].pitch;
		offsets[1] = f->bo[0].pitch * h;
		break;
	case DRM_FORMAT_P010:
		f->num_bos = 2;
		in[1] = 1;
		ret = bo_create(&f->bo[0], w, h, 16);
		if (!ret)
			ret = bo_create(&f->bo[1], cw, ch + 1, 32);
		pitches[0] = f->bo[0].pitch;
		pitches[1] = offsets[1] = f->bo[1].pitch;
		break;
	default:
		f->num_bos = 1;
		ret = bo_create(&f->bo[0], w, h, 16);
		pitches[0] = f->bo[0].pitch;
		break;
	}
	if (ret)
		return ret;
	return fb_add(f, w, h, format, format == DRM_FORMAT_YUYV ? 1 : 2, in,
		      offsets, pitches);
}

/* ------------------------------------------------------------------------ */
/* Scenes and their CRCs                                                    */
/* ------------------------------------------------------------------------ */

/* Commit @req and take the CRC of its picture; false with a reason. */
static bool scene_crc(drmModeAtomicReq *req, uint32_t *crc, const char *name)
{
	return kms_commit_crc(&d, req, debugfs, head, crc, name);
}

/* Plane @plane showing the top @src_h lines of @f at @x, @y, @w x @h. */
static void plane_show_lines(drmModeAtomicReq *req, uint32_t plane,
			     const struct fb *f, uint32_t src_h, int32_t x,
			     int32_t y, uint32_t w, uint32_t h)
{
	kms_add(d.fd, req, plane, PLANE, "FB_ID", f->id);
	kms_add(d.fd, req, plane, PLANE, "CRTC_ID", head->crtc_id);
	kms_add(d.fd, req, plane, PLANE, "SRC_X", 0);
	kms_add(d.fd, req, plane, PLANE, "SRC_Y", 0);
	kms_add(d.fd, req, plane, PLANE, "SRC_W", (uint64_t)f->width << 16);
	kms_add(d.fd, req, plane, PLANE, "SRC_H", (uint64_t)src_h << 16);
	kms_add(d.fd, req, plane, PLANE, "CRTC_X", (uint64_t)(int64_t)x);
	kms_add(d.fd, req, plane, PLANE, "CRTC_Y", (uint64_t)(int64_t)y);
	kms_add(d.fd, req, plane, PLANE, "CRTC_W", w);
	kms_add(d.fd, req, plane, PLANE, "CRTC_H", h);
}

/* Plane @plane showing all of @f at @x, @y, @w x @h. */
static void plane_show(drmModeAtomicReq *req, uint32_t plane,
		       const struct fb *f, int32_t x, int32_t y, uint32_t w,
		       uint32_t h)
{
	plane_show_lines(req, plane, f, f->height, x, y, w, h);
}

/* The head on, with its colour bars on the primary plane and nothing else. */
static int head_reset(void)
{
	drmModeAtomicReq *req = drmModeAtomicAlloc();
	unsigned int i;

	kms_head_on(&d, req, head, NULL);
	for (i = 0; i < d.num_planes; i++)
		if (d.planes[i] != head->primary &&
		    d.plane_crtcs[i] & 1u << head->pipe)
			kms_plane_off(&d, req, d.planes[i]);
	if (kms_prop_id(d.fd, head->primary, PLANE, "SCALING_FILTER"))
		kms_add(d.fd, req, head->primary, PLANE, "SCALING_FILTER", 0);
	if (kms_prop_id(d.fd, overlay, PLANE, "SCALING_FILTER"))
		kms_add(d.fd, req, overlay, PLANE, "SCALING_FILTER", 0);
	return kms_commit(&d, req, MODESET, NULL);
}

/* ------------------------------------------------------------------------ */
/* ycbcr                                                                    */
/* ------------------------------------------------------------------------ */

static const char *const encoding_names[] = { "bt601", "bt709", "bt2020" };
static const char *const range_names[] = { "limited", "full" };
static const char *const encoding_enums[] = {
	"ITU-R BT.601 YCbCr", "ITU-R BT.709 YCbCr", "ITU-R BT.2020 YCbCr",
};
static const char *const range_enums[] = {
	"YCbCr limited range", "YCbCr full range",
};

/* The value of enum property @name of @plane called @label, or -1. */
static int64_t enum_value(uint32_t plane, const char *name,
			  const char *label)
{
	drmModePropertyRes *p = NULL;
	int64_t value = -1;
	int i;

	if (!kms_prop_find(d.fd, plane, PLANE, name, &p))
		return -1;
	for (i = 0; i < p->count_enums; i++)
		if (!strcmp(p->enums[i].name, label))
			value = p->enums[i].value;
	drmModeFreeProperty(p);
	return value;
}

static uint32_t rng_state = 12345;

static uint32_t rng(void)
{
	rng_state = rng_state * 1103515245u + 12345u;
	return rng_state >> 8;
}

/* Random samples everywhere, the low 6 bits of P010's included. */
static void ycbcr_fill(struct fb *f)
{
	uint32_t lines[2] = { f->height, (f->height + 1) / 2 };
	uint32_t bytes[2], i, x, y;

	switch (f->format) {
	case DRM_FORMAT_NV12:
		bytes[0] = f->width;
		bytes[1] = (f->width + 1) / 2 * 2;
		break;
	case DRM_FORMAT_P010:
		bytes[0] = f->width * 2;
		bytes[1] = (f->width + 1) / 2 * 4;
		break;
	default:
		bytes[0] = f->width * 2;
		bytes[1] = 0;
		lines[1] = 0;
		break;
	}
	for (i = 0; i < 2; i++)
		for (y = 0; y < lines[i]; y++)
			for (x = 0; x < bytes[i]; x++)
				f->plane[i][(size_t)y * f->pitch[i] + x] = rng();
}

struct chroma {
	const uint8_t *base;
	uint32_t pitch;
	int which;			/* 0 Cb, 1 Cr */
	bool wide;			/* P010: 16 bits, the top 10 count */
};

static int chroma_sample(const void *ctx, int j, int k)
{
	const struct chroma *c = ctx;
	const uint8_t *s = c->base + (size_t)k * c->pitch;

	if (c->wide) {
		s += j * 4 + c->which * 2;
		return (s[0] | s[1] << 8) >> 6;
	}
	return s[j * 2 + c->which];
}

/* What @f shows with @encoding and @range, into XRGB8888 @out. */
static void ycbcr_expect(const struct fb *f, unsigned int encoding,
			 unsigned int range, struct fb *out)
{
	bool wide = f->format == DRM_FORMAT_P010;
	struct chroma cb = { f->plane[1], f->pitch[1], 0, wide };
	struct chroma cr = { f->plane[1], f->pitch[1], 1, wide };
	int cols = (f->width + 1) / 2, rows = (f->height + 1) / 2;
	struct pvdc_ycbcr k;
	uint32_t x, y;

	pvdc_ycbcr_init(&k, encoding, range, wide ? 10 : 8);
	for (y = 0; y < f->height; y++) {
		const uint8_t *line = f->plane[0] + (size_t)y * f->pitch[0];

		for (x = 0; x < f->width; x++) {
			int luma, u8, v8;

			if (f->format == DRM_FORMAT_YUYV) {
				const uint8_t *m = line + (x & ~1u) * 2;

				luma = line[x * 2];
				u8 = 8 * m[1];
				v8 = 8 * m[3];
			} else {
				luma = wide ? (line[x * 2] |
					       line[x * 2 + 1] << 8) >> 6 :
				       line[x];
				u8 = pvdc_ycbcr_chroma(chroma_sample, &cb, cols,
						       rows, x, y);
				v8 = pvdc_ycbcr_chroma(chroma_sample, &cr, cols,
						       rows, x, y);
			}
			*xrgb_pixel(out, x, y) = 0xff000000 |
				pvdc_ycbcr_rgb(&k, luma, u8, v8);
		}
	}
}

/* The YCbCr plane with its properties, over the head's colour bars. */
static drmModeAtomicReq *ycbcr_scene(const struct fb *f, unsigned int e,
				     unsigned int r)
{
	drmModeAtomicReq *req = drmModeAtomicAlloc();

	plane_show(req, overlay, f, YUV_X, YUV_Y, f->width, f->height);
	kms_add(d.fd, req, overlay, PLANE, "COLOR_ENCODING",
		enum_value(overlay, "COLOR_ENCODING", encoding_enums[e]));
	kms_add(d.fd, req, overlay, PLANE, "COLOR_RANGE",
		enum_value(overlay, "COLOR_RANGE", range_enums[r]));
	return req;
}

static void ycbcr_properties(void)
{
	bool ok = true;
	unsigned int i;

	for (i = 0; i < PVDC_YCBCR_ENCODINGS; i++)
		ok &= enum_value(overlay, "COLOR_ENCODING",
				 encoding_enums[i]) == i;
	for (i = 0; i < PVDC_YCBCR_RANGES; i++)
		ok &= enum_value(overlay, "COLOR_RANGE", range_enums[i]) == i;
	kms_result(ok, "overlay-has-color-encoding-bt601-bt709-bt2020-and-range-limited-full");
	kms_result(!kms_prop_id(d.fd, head->primary, PLANE, "COLOR_ENCODING"),
		   "primary-without-ycbcr-formats-has-no-color-encoding");
	kms_result(pvdc_ycbcr_check(), "reference-coefficients-are-the-spec-table");
}

static void test_ycbcr_format(uint32_t format, const char *name)
{
	uint32_t crcs[PVDC_YCBCR_ENCODINGS][PVDC_YCBCR_RANGES] = { { 0 } };
	uint32_t refs[PVDC_YCBCR_ENCODINGS][PVDC_YCBCR_RANGES] = { { 0 } };
	uint32_t w = format == DRM_FORMAT_YUYV ? YUV_W + 1 : YUV_W;
	bool done[PVDC_YCBCR_ENCODINGS][PVDC_YCBCR_RANGES] = { { false } };
	struct fb f, ref = { 0 };
	unsigned int e, r;
	int ret;

	ret = fb_ycbcr(&f, w, YUV_H, format);
	if (!ret)
		ret = fb_xrgb(&ref, w, YUV_H);
	if (ret) {
		kms_result(false, "%s: framebuffers: %s", name, strerror(-ret));
		fb_destroy(&f);
		fb_destroy(&ref);
		return;
	}
	ycbcr_fill(&f);

	for (e = 0; e < PVDC_YCBCR_ENCODINGS; e++) {
		for (r = 0; r < PVDC_YCBCR_RANGES; r++) {
			drmModeAtomicReq *req;
			char what[96];

			snprintf(what, sizeof(what), "%s-%s-%s-overlay", name,
				 encoding_names[e], range_names[r]);
			if (!scene_crc(ycbcr_scene(&f, e, r), &crcs[e][r],
				       what))
				continue;
			ycbcr_expect(&f, e, r, &ref);
			req = drmModeAtomicAlloc();
			plane_show(req, overlay, &ref, YUV_X, YUV_Y, w, YUV_H);
			if (!scene_crc(req, &refs[e][r], what))
				continue;
			done[e][r] = true;
			kms_result(crcs[e][r] == refs[e][r],
				   "%s-crc-is-the-xrgb-reference%s%08x, reference %08x",
				   what, crcs[e][r] == refs[e][r] ? " # " : ": ",
				   crcs[e][r], refs[e][r]);
		}
	}

	/* Were the properties used at all: colours that depend on them. */
	for (e = 1; e < PVDC_YCBCR_ENCODINGS; e++)
		kms_result(done[0][0] && done[e][0] &&
			   crcs[e][0] != crcs[0][0] && refs[e][0] != refs[0][0],
			   "%s-%s-differs-from-bt601 # %08x, %08x", name,
			   encoding_names[e], crcs[e][0], crcs[0][0]);
	kms_result(done[0][0] && done[0][1] && crcs[0][1] != crcs[0][0] &&
		   refs[0][1] != refs[0][0],
		   "%s-full-range-differs-from-limited # %08x, %08x", name,
		   crcs[0][1], crcs[0][0]);

	fb_destroy(&ref);
	fb_destroy(&f);
}

static void test_ycbcr(void)
{
	ycbcr_properties();
	test_ycbcr_format(DRM_FORMAT_NV12, "nv12");
	test_ycbcr_format(DRM_FORMAT_P010, "p010");
	test_ycbcr_format(DRM_FORMAT_YUYV, "yuyv");
	head_reset();
}

/* ------------------------------------------------------------------------ */
/* upscale                                                                  */
/* ------------------------------------------------------------------------ */

/*
 * The source pixel destination pixel @d samples with nearest filtering,
 * @src pixels shown on @dst: the scale factor src / dst rounded to 16.16,
 * the sample at the pixel centre, an exact pixel boundary going to the
 * pixel before; as the spec says (@exact), and with the sample position
 * rounded to 1/65536 as pixman takes it.  The two must agree for the
 * picture to be predictable.
 */
static int nearest(uint32_t src, uint32_t dst, uint32_t pos, bool exact)
{
	int64_t scale = (((int64_t)src << 16) + dst / 2) / dst;
	int64_t u, i;

	if (exact)	/* ceil((2 pos + 1) scale / 2^17) - 1 */
		i = ((2 * pos + 1) * scale + (1 << 17) - 1) / (1 << 17) - 1;
	else {
		u = scale * pos + ((scale * 0x8000 + 0x8000) >> 16);
		i = (u - 1) >> 16;
	}
	return i < 0 ? 0 : i >= src ? src - 1 : i;
}

static bool nearest_predictable(uint32_t src, uint32_t dst)
{
	uint32_t i;

	for (i = 0; i < dst; i++)
		if (nearest(src, dst, i, true) != nearest(src, dst, i, false))
			return false;
	return true;
}

/* @plane (primary or overlay) showing the 20x20 @tiny on the whole mode. */
static drmModeAtomicReq *upscaled(uint32_t plane, const struct fb *tiny,
				  int filter)
{
	drmModeAtomicReq *req = drmModeAtomicAlloc();
	const drmModeModeInfo *m = &head->mode;

	plane_show(req, plane, tiny, 0, 0, m->hdisplay, m->vdisplay);
	kms_add(d.fd, req, plane, PLANE, "SCALING_FILTER", filter);
	return req;
}

/* The primary unscaled with @full, every other plane of the head off. */
static drmModeAtomicReq *full_screen(const struct fb *full)
{
	drmModeAtomicReq *req = drmModeAtomicAlloc();

	plane_show(req, head->primary, full, 0, 0, full->width, full->height);
	kms_add(d.fd, req, head->primary, PLANE, "SCALING_FILTER", 0);
	kms_plane_off(&d, req, overlay);
	return req;
}

static void test_upscale_on(uint32_t plane, const char *name,
			    struct fb *tiny, struct fb *full)
{
	const drmModeModeInfo *m = &head->mode;
	uint32_t crc, want, x, y;
	char what[96];
	int nn;

	/* A solid colour: whatever the filter, the same colour everywhere. */
	for (y = 0; y < TINY; y++)
		for (x = 0; x < TINY; x++)
			*xrgb_pixel(tiny, x, y) = 0xff2080c0;
	for (y = 0; y < m->vdisplay; y++)
		for (x = 0; x < m->hdisplay; x++)
			*xrgb_pixel(full, x, y) = 0xff2080c0;
	snprintf(what, sizeof(what), "%s-20x20-solid-scaled-to-%ux%u", name,
		 m->hdisplay, m->vdisplay);
	if (scene_crc(upscaled(plane, tiny, 0), &crc, what) &&
	    scene_crc(full_screen(full), &want, what))
		kms_result(crc == want, "%s-is-a-full-screen-solid%s%08x, reference %08x",
			   what, crc == want ? " # " : ": ", crc, want);
	head_reset();

	/* Every pixel its own colour, sampled as the spec says. */
	snprintf(what, sizeof(what), "%s-20x20-pattern-nearest-scaled-to-%ux%u",
		 name, m->hdisplay, m->vdisplay);
	if (!nearest_predictable(TINY, m->hdisplay) ||
	    !nearest_predictable(TINY, m->vdisplay)) {
		printf("ok %s # skip samples on pixel boundaries\n", what);
		return;
	}
	nn = enum_value(plane, "SCALING_FILTER", "Nearest Neighbor");
	for (y = 0; y < TINY; y++)
		for (x = 0; x < TINY; x++)
			*xrgb_pixel(tiny, x, y) = 0xff000000 | x * 12 << 16 |
						  y * 12 << 8 | (x ^ y) * 8;
	for (y = 0; y < m->vdisplay; y++)
		for (x = 0; x < m->hdisplay; x++)
			*xrgb_pixel(full, x, y) =
				*xrgb_pixel(tiny,
					    nearest(TINY, m->hdisplay, x, true),
					    nearest(TINY, m->vdisplay, y, true));
	if (nn >= 0 && scene_crc(upscaled(plane, tiny, nn), &crc, what) &&
	    scene_crc(full_screen(full), &want, what))
		kms_result(crc == want, "%s-is-the-predicted-picture%s%08x, reference %08x",
			   what, crc == want ? " # " : ": ", crc, want);
	else if (nn < 0)
		kms_result(false, "%s: no Nearest Neighbor filter", what);
	head_reset();
}

static void test_upscale(void)
{
	const drmModeModeInfo *m = &head->mode;
	struct fb tiny, full;
	int ret;

	ret = fb_xrgb(&tiny, TINY, TINY);
	if (!ret)
		ret = fb_xrgb(&full, m->hdisplay, m->vdisplay);
	if (ret) {
		kms_result(false, "upscale: framebuffers: %s", strerror(-ret));
		return;
	}
	test_upscale_on(head->primary, "primary", &tiny, &full);
	test_upscale_on(overlay, "overlay", &tiny, &full);
	fb_destroy(&full);
	fb_destroy(&tiny);
}

/* ------------------------------------------------------------------------ */
/* bandwidth                                                                */
/* ------------------------------------------------------------------------ */

static volatile uint32_t *bar0;

/* What the spec says a plane of @w x @h source pixels needs, in KiB. */
static uint64_t need_kib(uint32_t format, uint64_t w, uint64_t h)
{
	/* in half-bytes per pixel */
	uint64_t half = format == DRM_FORMAT_NV12 ? 3 :
			format == DRM_FORMAT_P010 ? 6 : 2 * kms_format_cpp(format);

	return (w * h * half + 2047) / 2048;
}

/* A width that makes the KiB round up, and the head's allocation. */
#define BW_WIDTH	4095

static void test_bandwidth_format(uint32_t format, const char *name)
{
	uint32_t alloc = kms_reg(bar0, PVDC_HEAD_ACTIVE(head->pipe) +
				 PVDC_HS_BANDWIDTH);
	uint64_t left = alloc - need_kib(DRM_FORMAT_XRGB8888,
					 head->buf[0].width,
					 head->buf[0].height);
	uint64_t h = left * 2048 / (BW_WIDTH * 3 *
				    (format == DRM_FORMAT_P010 ? 2 : 1));
	drmModeAtomicReq *req;
	struct fb f;
	int ret;

	/* The most lines that fit: h, and h + 1 that does not. */
	while (need_kib(format, BW_WIDTH, h + 1) <= left)
		h++;
	while (h && need_kib(format, BW_WIDTH, h) > left)
		h--;
	if (!h || h + 1 > PVDC_Y(kms_reg(bar0, PVDC_REG_MAX_SIZE))) {
		printf("ok %s-bandwidth # skip %u KiB left\n", name,
		       (unsigned int)left);
		return;
	}
	printf("# %s: the head has %u KiB, %" PRIu64 " left: %ux%" PRIu64
	       " needs %" PRIu64 ", one line more %" PRIu64 "\n", name, alloc,
	       left, BW_WIDTH, h, need_kib(format, BW_WIDTH, h),
	       need_kib(format, BW_WIDTH, h + 1));

	ret = fb_ycbcr(&f, BW_WIDTH, h + 1, format);
	if (ret) {
		kms_result(false, "%s-bandwidth: framebuffer: %s", name,
			   strerror(-ret));
		fb_destroy(&f);
		return;
	}
	req = drmModeAtomicAlloc();
	plane_show(req, overlay, &f, 0, 0, BW_WIDTH, h + 1);
	ret = kms_commit(&d, req, TEST_ONLY, NULL);
	kms_result(ret == -EINVAL, "%s-overlay-needing-1-line-more-than-the-head-has-refused%s%s",
		   name, ret == -EINVAL ? "" : ": ",
		   ret == -EINVAL ? "" : ret ? strerror(-ret) : "accepted");

	/* The same framebuffer, a line less of it: what the head has left. */
	req = drmModeAtomicAlloc();
	plane_show_lines(req, overlay, &f, h, 0, 0, BW_WIDTH, h);
	ret = kms_commit(&d, req, 0, NULL);
	kms_result(!ret, "%s-overlay-needing-all-the-head-has-left-commits%s%s",
		   name, ret ? ": " : "", ret ? strerror(-ret) : "");
	head_reset();
	fb_destroy(&f);
}

static void test_bandwidth(void)
{
	test_bandwidth_format(DRM_FORMAT_NV12, "nv12");
	test_bandwidth_format(DRM_FORMAT_P010, "p010");
}

/* ------------------------------------------------------------------------ */
/* refusals                                                                 */
/* ------------------------------------------------------------------------ */

/* A TEST_ONLY commit of @plane showing @f unscaled: EINVAL expected. */
static void refused(uint32_t plane, const struct fb *f, const char *name)
{
	drmModeAtomicReq *req = drmModeAtomicAlloc();
	int ret;

	plane_show(req, plane, f, 0, 0, f->width, f->height);
	ret = kms_commit(&d, req, TEST_ONLY, NULL);
	kms_result(ret == -EINVAL, "%s-test-only-einval%s%s", name,
		   ret == -EINVAL ? "" : ": ", ret == -EINVAL ? "" :
		   ret ? strerror(-ret) : "accepted");
}

/*
 * NV12 of @w x @h pixels: Y in one buffer object, Cb:Cr in another of
 * @rows lines of 4096 bytes (a whole number of pages: no slack), at
 * @offset with @pitch; the ADDFB2 result.
 */
static int nv12_split(struct fb *f, uint32_t w, uint32_t h, uint32_t rows,
		      uint32_t offset, uint32_t pitch)
{
	const unsigned int in[2] = { 0, 1 };
	uint32_t offsets[2] = { 0, offset }, pitches[2];
	int ret;

	memset(f, 0, sizeof(*f));
	f->num_bos = 2;
	ret = bo_create(&f->bo[0], w, h, 8);
	if (!ret)
		ret = bo_create(&f->bo[1], 1024, rows, 32);
	if (ret)
		return ret;
	pitches[0] = f->bo[0].pitch;
	pitches[1] = pitch;
	return fb_add(f, w, h, DRM_FORMAT_NV12, 2, in, offsets, pitches);
}

static void test_refusals(void)
{
	uint32_t offset_align = kms_reg(bar0, PVDC_REG_OFFSET_ALIGN);
	uint32_t pitch_align = kms_reg(bar0, PVDC_REG_PITCH_ALIGN);
	uint32_t *before, *after;
	size_t count, count2;
	struct fb f;
	int ret;

	kms_result(offset_align >= 2 && pitch_align >= 2 &&
		   4096 % pitch_align == 0,
		   "refusals-alignments (offset %u, pitch %u)", offset_align,
		   pitch_align);
	before = kms_shadow_registers(bar0, &count);

	/* What the device would not read: refused by ADDFB2 (issue 35). */
	ret = nv12_split(&f, 64, 20, 12, offset_align / 2, 4096);
	kms_result(ret == -EINVAL, "nv12-chroma-offset-misaligned-addfb2-einval%s%s",
		   ret == -EINVAL ? "" : ": ",
		   ret == -EINVAL ? "" : ret ? strerror(-ret) : "accepted");
	fb_destroy(&f);
	ret = nv12_split(&f, 64, 20, 12, 0, 4096 - pitch_align / 2);
	kms_result(ret == -EINVAL, "nv12-chroma-pitch-misaligned-addfb2-einval%s%s",
		   ret == -EINVAL ? "" : ": ",
		   ret == -EINVAL ? "" : ret ? strerror(-ret) : "accepted");
	fb_destroy(&f);
	ret = fb_xrgb_pitch(&f, 64, 20, 64 * 4 + pitch_align / 2);
	kms_result(ret == -EINVAL, "xrgb8888-pitch-misaligned-addfb2-einval%s%s",
		   ret == -EINVAL ? "" : ": ",
		   ret == -EINVAL ? "" : ret ? strerror(-ret) : "accepted");
	fb_destroy(&f);

	/*
	 * 21 lines have 11 chroma lines, the last one a half: a buffer of 10
	 * is refused (drm_gem_fb_create() rounds the subsampled height up),
	 * one of 11 accepted.
	 */
	ret = nv12_split(&f, 64, 21, 10, 0, 4096);
	kms_result(ret == -EINVAL, "nv12-odd-height-chroma-past-its-buffer-addfb2-einval%s%s",
		   ret == -EINVAL ? "" : ": ",
		   ret == -EINVAL ? "" : ret ? strerror(-ret) : "accepted");
	if (!ret)
		refused(overlay, &f, "nv12-odd-height-chroma-past-its-buffer");
	fb_destroy(&f);
	ret = nv12_split(&f, 64, 21, 11, 0, 4096);
	kms_result(!ret, "nv12-odd-height-chroma-in-its-buffer-addfb2-accepted%s%s",
		   ret ? ": " : "", ret ? strerror(-ret) : "");
	if (!ret) {
		drmModeAtomicReq *req = drmModeAtomicAlloc();

		plane_show(req, overlay, &f, 0, 0, f.width, f.height);
		ret = kms_commit(&d, req, TEST_ONLY, NULL);
		kms_result(!ret, "nv12-odd-height-chroma-in-its-buffer-test-only-accepted%s%s",
			   ret ? ": " : "", ret ? strerror(-ret) : "");
	}
	/* NV12 is for overlays. */
	if (!ret) {
		refused(head->primary, &f, "nv12-on-primary");
		if (head->cursor)
			refused(head->cursor, &f, "nv12-on-cursor");
	}
	fb_destroy(&f);

	/* Wholly outside: the DRM core's own check. */
	ret = nv12_split(&f, 64, 20, 10, 4096 * 10, 4096);
	kms_result(ret == -EINVAL, "nv12-chroma-offset-past-its-buffer-addfb2-einval%s%s",
		   ret == -EINVAL ? "" : ": ",
		   ret == -EINVAL ? "" : ret ? strerror(-ret) : "accepted");
	fb_destroy(&f);

	/* A packed 4:2:2 framebuffer is whole macropixels. */
	ret = fb_ycbcr(&f, 63, 20, DRM_FORMAT_YUYV);
	kms_result(ret == -EINVAL, "yuyv-odd-width-addfb2-einval%s%s",
		   ret == -EINVAL ? "" : ": ",
		   ret == -EINVAL ? "" : ret ? strerror(-ret) : "accepted");
	fb_destroy(&f);

	after = kms_shadow_registers(bar0, &count2);
	kms_result(count == count2 && !memcmp(before, after, count * 4),
		   "refused-requests-change-no-device-register");
	free(before);
	free(after);
}

/* ------------------------------------------------------------------------ */
/* pitch                                                                    */
/* ------------------------------------------------------------------------ */

/* Whether @plane lists @format. */
static bool plane_takes(uint32_t plane, uint32_t format)
{
	drmModePlane *p = drmModeGetPlane(d.fd, plane);
	bool takes = false;
	uint32_t i;

	for (i = 0; p && i < p->count_formats; i++)
		takes |= p->formats[i] == format;
	drmModeFreePlane(p);
	return takes;
}

/*
 * Issue 35: a 72x72 NV12 framebuffer whose Y and Cb:Cr pitches are 72
 * bytes, its Cb:Cr plane right after the Y plane, is taken by ADDFB2 and
 * committed on every plane of the head that lists NV12.
 */
static void test_pitch(void)
{
	const uint32_t size = 72, pitch = 72;
	const uint32_t offsets[2] = { 0, pitch * size };
	const uint32_t pitches[2] = { pitch, pitch };
	static const unsigned int in[2];
	unsigned int i, shown = 0;
	struct fb f;
	int ret;

	memset(&f, 0, sizeof(f));
	f.num_bos = 1;
	ret = bo_create(&f.bo[0], pitch, size + size / 2, 8);
	if (!ret) {
		memset(f.bo[0].map, 0x80, f.bo[0].size);
		ret = fb_add(&f, size, size, DRM_FORMAT_NV12, 2, in, offsets,
			     pitches);
	}
	kms_result(!ret, "nv12-72x72-pitch-72-addfb2-accepted%s%s",
		   ret ? ": " : "", ret ? strerror(-ret) : "");
	for (i = 0; !ret && i < d.num_planes; i++) {
		drmModeAtomicReq *req;
		int err;

		if (!(d.plane_crtcs[i] & 1u << head->pipe) ||
		    !plane_takes(d.planes[i], DRM_FORMAT_NV12))
			continue;
		req = drmModeAtomicAlloc();
		plane_show(req, d.planes[i], &f, 11, 7, size, size);
		err = kms_commit(&d, req, 0, NULL);
		kms_result(!err, "nv12-72x72-pitch-72-commits-on-plane-%u%s%s",
			   d.planes[i], err ? ": " : "",
			   err ? strerror(-err) : "");
		shown += !err;
		req = drmModeAtomicAlloc();
		kms_plane_off(&d, req, d.planes[i]);
		kms_commit(&d, req, 0, NULL);
	}
	kms_result(shown > 0, "nv12-72x72-pitch-72-shown-by-%u-planes", shown);
	fb_destroy(&f);
}

/* ------------------------------------------------------------------------ */
/* properties                                                               */
/* ------------------------------------------------------------------------ */

/* Whether @plane has property @name, and if so whether it is immutable. */
static bool has_prop(uint32_t plane, const char *name, bool *immutable)
{
	drmModePropertyRes *p = NULL;

	if (!kms_prop_find(d.fd, plane, PLANE, name, &p))
		return false;
	if (immutable)
		*immutable = p->flags & DRM_MODE_PROP_IMMUTABLE;
	drmModeFreeProperty(p);
	return true;
}

/* struct drm_plane_size_hint of the uAPI, newer than Debian 12's libdrm. */
struct size_hint {
	uint16_t width, height;
};

/* The SIZE_HINTS of @plane: its number of hints, each checked. */
static int size_hints(uint32_t plane, uint32_t max_w, uint32_t max_h)
{
	const struct size_hint *hint;
	drmModePropertyBlobRes *blob;
	uint64_t id;
	int n, i;

	if (!kms_prop_value(d.fd, plane, PLANE, "SIZE_HINTS", &id) || !id)
		return -1;
	blob = drmModeGetPropertyBlob(d.fd, id);
	if (!blob)
		return -1;
	hint = blob->data;
	n = blob->length / sizeof(*hint);
	for (i = 0; i < n; i++)
		if (!hint[i].width || !hint[i].height ||
		    hint[i].width > max_w || hint[i].height > max_h)
			n = -1;
	drmModeFreePropertyBlob(blob);
	return n;
}

/*
 * Blending properties only where the plane honours them: a client taking
 * "the topmost plane with alpha" must land on an overlay, not on a cursor
 * that takes 256x256 at most.
 */
static void test_properties(void)
{
	static const char *const blending[] = { "alpha", "pixel blend mode" };
	uint64_t cursor_w = 0, cursor_h = 0;
	bool immutable;
	int n;
	unsigned int i;

	drmGetCap(d.fd, DRM_CAP_CURSOR_WIDTH, &cursor_w);
	drmGetCap(d.fd, DRM_CAP_CURSOR_HEIGHT, &cursor_h);
	for (i = 0; i < sizeof(blending) / sizeof(blending[0]); i++) {
		kms_result(!has_prop(head->cursor, blending[i], NULL),
			   "properties-cursor-no-%s", blending[i]);
		kms_result(has_prop(head->primary, blending[i], NULL) &&
			   has_prop(overlay, blending[i], NULL),
			   "properties-planes-%s", blending[i]);
	}
	kms_result(has_prop(head->cursor, "zpos", &immutable) && immutable,
		   "properties-cursor-zpos-immutable");
	kms_result(has_prop(head->primary, "zpos", &immutable) && !immutable &&
		   has_prop(overlay, "zpos", &immutable) && !immutable,
		   "properties-planes-zpos-mutable");
	n = size_hints(head->cursor, cursor_w, cursor_h);
	kms_result(n > 0, "properties-cursor-size-hints (%d within %" PRIu64
		   "x%" PRIu64 ")", n, cursor_w, cursor_h);
	kms_result(!has_prop(overlay, "SIZE_HINTS", NULL),
		   "properties-overlay-no-size-hints");
}

/* ------------------------------------------------------------------------ */

int main(int argc, char **argv)
{
	int first, ret;

	first = kms_crc_start(argc, argv, &d, &debugfs, "planes-setup");
	head = &d.heads[0];
	overlay = kms_overlay(&d, 0);
	if (!overlay) {
		printf("not ok planes-setup: no overlay plane\n");
		return 1;
	}
	ret = head_reset();
	if (ret) {
		printf("not ok planes-setup: head %u on: %s\n", head->pipe,
		       strerror(-ret));
		return 1;
	}
	printf("# head %u %ux%u, overlay plane %u\n", head->pipe,
	       head->mode.hdisplay, head->mode.vdisplay, overlay);

	if (kms_wanted(argc, argv, first, "properties"))
		test_properties();
	if (kms_wanted(argc, argv, first, "ycbcr"))
		test_ycbcr();
	if (kms_wanted(argc, argv, first, "upscale"))
		test_upscale();
	if (kms_wanted(argc, argv, first, "pitch"))
		test_pitch();
	if (kms_wanted(argc, argv, first, "bandwidth") ||
	    kms_wanted(argc, argv, first, "refusals"))
		bar0 = kms_bar_map(d.card, 0, NULL);
	if (kms_wanted(argc, argv, first, "bandwidth"))
		test_bandwidth();
	if (kms_wanted(argc, argv, first, "refusals"))
		test_refusals();

	close(d.fd);
	return kms_failures ? 1 : 0;
}
