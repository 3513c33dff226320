// SPDX-License-Identifier: GPL-2.0-or-later OR MIT
/*
 * pvdc-color: the CRTC colour pipeline (DEGAMMA_LUT, CTM, GAMMA_LUT), by
 * frame CRC against XRGB8888 framebuffers holding the pixels the spec's
 * arithmetic predicts.  On the first connected head, with a framebuffer F
 * whose channels take every 8-bit value:
 *
 *   properties  DEGAMMA_LUT, CTM and GAMMA_LUT, with DEGAMMA_LUT_SIZE and
 *               GAMMA_LUT_SIZE the device's LUT_SIZE, and a legacy gamma
 *               table of 256 entries (or the GAMMA_LUT size if smaller).
 *   identity    Identity LUTs (of the largest size and of 256 entries) and
 *               the identity matrix, alone and together, give the CRC of
 *               no pipeline.
 *   known       An inverting GAMMA_LUT of 256 entries ((255 - i) * 257)
 *               and an inverting DEGAMMA_LUT of 2 entries give the CRC of
 *               F with inverted pixels shown without a pipeline; a CTM
 *               swapping red and blue that of F with the channels swapped;
 *               DEGAMMA inverting and CTM swapping together both; a
 *               GAMMA_LUT set by the modeset that enables the head.
 *   latched     Changing GAMMA_LUT on the enabled head commits without
 *               ALLOW_MODESET and does not modeset it: its vblank timeline
 *               (VBLANK_COUNT and VBLANK_TIME, read through BAR 0) goes on
 *               unbroken, where a modeset would have restarted it.
 *   refusals    TEST_ONLY refuses a 4097-entry GAMMA_LUT and DEGAMMA_LUT
 *               and a 1-entry one with EINVAL, accepts ones of the largest
 *               size; no device register changes meanwhile.
 *   legacy      The legacy gamma ioctl (drmModeCrtcSetGamma) with an
 *               inverting ramp gives the CRC of the inverted F, sets
 *               GAMMA_LUT, and an identity ramp gives back F's CRC.
 *
 *   hold        Not a test: the head on with F and the inverting
 *               GAMMA_LUT; prints "# holding" and waits for SIGTERM (the
 *               host compares its screendumps across suspend to RAM).
 *
 * Usage: pvdc-color [-d DEBUGFS-DIR] [-c DEVICE] [TEST...]; every test
 * when none is named.  Reads BAR 0: boot with iomem=relaxed.
 */
#include <inttypes.h>
#include <poll.h>
#include <signal.h>

#include "pvdc-kms-util.h"
#include "pvdc-regs.h"

#define TEST_ONLY	DRM_MODE_ATOMIC_TEST_ONLY
#define MODESET		DRM_MODE_ATOMIC_ALLOW_MODESET
#define CRTC		DRM_MODE_OBJECT_CRTC
#define PLANE		DRM_MODE_OBJECT_PLANE

/* S31.32 sign-magnitude 1.0 */
#define CTM_ONE		(1ull << 32)

static struct kms_display d;
static struct kms_head *head;
static const char *debugfs = KMS_DEBUGFS;
static volatile uint32_t *bar0;
static uint32_t max_degamma, max_gamma;

/* F, F inverted, F with red and blue swapped, both. */
enum { PIC_F, PIC_INVERTED, PIC_SWAPPED, PIC_INVERTED_SWAPPED, PICS };
static struct kms_buffer pics[PICS];

/* ------------------------------------------------------------------------ */
/* Pictures, blobs, scenes                                                  */
/* ------------------------------------------------------------------------ */

static uint32_t pic_pixel(unsigned int which, uint32_t x, uint32_t y)
{
	uint32_t r = x & 0xff, g = y & 0xff, b = (x * 7 + y * 13) & 0xff;
	uint32_t t;

	if (which == PIC_INVERTED || which == PIC_INVERTED_SWAPPED) {
		r = 255 - r;
		g = 255 - g;
		b = 255 - b;
	}
	if (which == PIC_SWAPPED || which == PIC_INVERTED_SWAPPED) {
		t = r;
		r = b;
		b = t;
	}
	return 0xff000000 | r << 16 | g << 8 | b;
}

static void pics_create(void)
{
	unsigned int i;
	uint32_t x, y;

	for (i = 0; i < PICS; i++) {
		struct kms_buffer *p = &pics[i];

		if (kms_buffer_create(d.fd, p, head->mode.hdisplay,
				      head->mode.vdisplay,
				      DRM_FORMAT_XRGB8888)) {
			printf("not ok color-setup: buffers: %s\n",
			       strerror(errno));
			exit(1);
		}
		for (y = 0; y < p->height; y++)
			for (x = 0; x < p->width; x++)
				((uint32_t *)((uint8_t *)p->map +
					      (size_t)y * p->pitch))[x] =
					pic_pixel(i, x, y);
	}
}

static uint32_t blob_create(const void *data, size_t size)
{
	uint32_t id = 0;

	if (drmModeCreatePropertyBlob(d.fd, data, size, &id)) {
		printf("not ok blob of %zu bytes: %s\n", size, strerror(errno));
		exit(1);
	}
	return id;
}

/* A LUT of @n entries, entry i = @f(i, n) on every channel. */
static uint32_t lut_blob(unsigned int n,
			 uint16_t (*f)(unsigned int i, unsigned int n))
{
	struct drm_color_lut *lut = calloc(n, sizeof(*lut));
	unsigned int i;
	uint32_t id;

	for (i = 0; i < n; i++)
		lut[i].red = lut[i].green = lut[i].blue = f(i, n);
	id = blob_create(lut, n * sizeof(*lut));
	free(lut);
	return id;
}

static uint16_t identity(unsigned int i, unsigned int n)
{
	if (n < 2)
		return 0;
	return (uint16_t)(((uint64_t)i * 0xffff + (n - 1) / 2) / (n - 1));
}

static uint16_t inverting(unsigned int i, unsigned int n)
{
	return identity(n - 1 - i, n);
}

/* A CTM with 1.0 at (row, column) @ones[row] and 0 elsewhere. */
static uint32_t ctm_blob(const unsigned int ones[3])
{
	struct drm_color_ctm ctm = { { 0 } };
	unsigned int row;

	for (row = 0; row < 3; row++)
		ctm.matrix[row * 3 + ones[row]] = CTM_ONE;
	return blob_create(&ctm, sizeof(ctm));
}

/* The vblank after the next one: what is committed now is shown from it. */
static uint32_t next_vblank(void)
{
	drmVBlank vbl = { 0 };

	vbl.request.type = DRM_VBLANK_RELATIVE |
			   (head->pipe << DRM_VBLANK_HIGH_CRTC_SHIFT);
	vbl.request.sequence = 1;
	return drmWaitVBlank(d.fd, &vbl) ? 0 : vbl.reply.sequence;
}

/*
 * Picture @pic with the pipeline @degamma, @ctm, @gamma (blob ids, 0 for
 * none), committed without ALLOW_MODESET; its CRC, false with a "not ok"
 * line for @name if that fails.
 */
static bool scene(unsigned int pic, uint32_t degamma, uint32_t ctm,
		  uint32_t gamma, uint32_t *crc, const char *name)
{
	drmModeAtomicReq *req = drmModeAtomicAlloc();

	kms_add(d.fd, req, head->primary, PLANE, "FB_ID", pics[pic].fb_id);
	kms_add(d.fd, req, head->crtc_id, CRTC, "DEGAMMA_LUT", degamma);
	kms_add(d.fd, req, head->crtc_id, CRTC, "CTM", ctm);
	kms_add(d.fd, req, head->crtc_id, CRTC, "GAMMA_LUT", gamma);
	return kms_commit_crc(&d, req, debugfs, head, crc, name);
}

/* @name: the scene's CRC is @want's. */
static void expect(unsigned int pic, uint32_t degamma, uint32_t ctm,
		   uint32_t gamma, uint32_t want, const char *name)
{
	uint32_t crc;

	if (scene(pic, degamma, ctm, gamma, &crc, name))
		kms_result(crc == want, "%s%s%08x, expected %08x", name,
			   crc == want ? " # " : ": crc ", crc, want);
}

/* The head on with F, its own mode, no pipeline. */
static int head_reset(void)
{
	drmModeAtomicReq *req = drmModeAtomicAlloc();
	unsigned int i;

	kms_head_on(&d, req, head, NULL);
	kms_add(d.fd, req, head->primary, PLANE, "FB_ID", pics[PIC_F].fb_id);
	for (i = 0; i < d.num_planes; i++)
		if (d.planes[i] != head->primary &&
		    d.plane_crtcs[i] & 1u << head->pipe)
			kms_plane_off(&d, req, d.planes[i]);
	if (kms_prop_id(d.fd, head->crtc_id, CRTC, "GAMMA_LUT")) {
		kms_add(d.fd, req, head->crtc_id, CRTC, "DEGAMMA_LUT", 0);
		kms_add(d.fd, req, head->crtc_id, CRTC, "CTM", 0);
		kms_add(d.fd, req, head->crtc_id, CRTC, "GAMMA_LUT", 0);
	}
	return kms_commit(&d, req, MODESET, NULL);
}

/* The CRCs of the pictures without a pipeline. */
static uint32_t refs[PICS];
static bool refs_ok;

static void take_refs(void)
{
	static const char *const names[PICS] = {
		"f", "f-inverted", "f-swapped", "f-inverted-swapped",
	};
	char what[64];
	unsigned int i;

	refs_ok = true;
	for (i = 0; i < PICS; i++) {
		snprintf(what, sizeof(what), "reference-crc-%s", names[i]);
		refs_ok &= scene(i, 0, 0, 0, &refs[i], what);
	}
	/* Pictures that differ, or the comparisons below prove nothing. */
	kms_result(refs_ok && refs[0] != refs[1] && refs[0] != refs[2] &&
		   refs[0] != refs[3] && refs[1] != refs[2] &&
		   refs[1] != refs[3] && refs[2] != refs[3],
		   "reference-crcs-differ # %08x %08x %08x %08x", refs[0],
		   refs[1], refs[2], refs[3]);
}

/* ------------------------------------------------------------------------ */
/* properties                                                               */
/* ------------------------------------------------------------------------ */

static void test_properties(void)
{
	uint32_t lut_size = kms_reg(bar0, PVDC_REG_LUT_SIZE);
	uint64_t degamma_size = 0, gamma_size = 0;
	drmModeCrtc *crtc;
	bool has;

	has = kms_prop_id(d.fd, head->crtc_id, CRTC, "DEGAMMA_LUT") &&
	      kms_prop_id(d.fd, head->crtc_id, CRTC, "CTM") &&
	      kms_prop_id(d.fd, head->crtc_id, CRTC, "GAMMA_LUT");
	kms_prop_value(d.fd, head->crtc_id, CRTC, "DEGAMMA_LUT_SIZE",
		       &degamma_size);
	kms_prop_value(d.fd, head->crtc_id, CRTC, "GAMMA_LUT_SIZE",
		       &gamma_size);
	crtc = drmModeGetCrtc(d.fd, head->crtc_id);
	kms_result(has, "crtc-has-degamma-lut-ctm-gamma-lut");
	kms_result(degamma_size == max_degamma && gamma_size == max_gamma &&
		   max_degamma >= PVDC_LUT_MIN_SIZE &&
		   max_gamma >= PVDC_LUT_MIN_SIZE,
		   "lut-sizes-are-the-device-lut-size # degamma %" PRIu64
		   ", gamma %" PRIu64 ", LUT_SIZE %#x", degamma_size,
		   gamma_size, lut_size);
	kms_result(crtc && (uint32_t)crtc->gamma_size ==
		   (max_gamma < 256 ? max_gamma : 256),
		   "legacy-gamma-size-256 # %d", crtc ? crtc->gamma_size : -1);
	drmModeFreeCrtc(crtc);
}

/* ------------------------------------------------------------------------ */
/* identity, known                                                          */
/* ------------------------------------------------------------------------ */

static const unsigned int ctm_identity[3] = { 0, 1, 2 };
static const unsigned int ctm_swap[3] = { 2, 1, 0 };

static void test_identity(void)
{
	uint32_t degamma = lut_blob(max_degamma, identity);
	uint32_t gamma = lut_blob(max_gamma, identity);
	uint32_t lut256 = lut_blob(256, identity);
	uint32_t ctm = ctm_blob(ctm_identity);
	char what[96];

	snprintf(what, sizeof(what), "identity-gamma-lut-%u-is-no-pipeline",
		 max_gamma);
	expect(PIC_F, 0, 0, gamma, refs[PIC_F], what);
	snprintf(what, sizeof(what), "identity-degamma-lut-%u-is-no-pipeline",
		 max_degamma);
	expect(PIC_F, degamma, 0, 0, refs[PIC_F], what);
	expect(PIC_F, 0, 0, lut256, refs[PIC_F],
	       "identity-gamma-lut-256-is-no-pipeline");
	expect(PIC_F, lut256, 0, 0, refs[PIC_F],
	       "identity-degamma-lut-256-is-no-pipeline");
	expect(PIC_F, 0, ctm, 0, refs[PIC_F], "identity-ctm-is-no-pipeline");
	expect(PIC_F, degamma, ctm, gamma, refs[PIC_F],
	       "identity-degamma-ctm-gamma-is-no-pipeline");
	expect(PIC_F, 0, 0, 0, refs[PIC_F], "no-pipeline-again-is-f");

	drmModeDestroyPropertyBlob(d.fd, degamma);
	drmModeDestroyPropertyBlob(d.fd, gamma);
	drmModeDestroyPropertyBlob(d.fd, lut256);
	drmModeDestroyPropertyBlob(d.fd, ctm);
}

/* The head off, then on again with the inverting GAMMA_LUT @invert. */
static void test_modeset(uint32_t invert)
{
	const char *name = "gamma-lut-set-by-the-modeset-enabling-the-head";
	drmModeAtomicReq *req = drmModeAtomicAlloc();
	uint32_t since, crc = 0;
	int err;

	kms_head_off(&d, req, head);
	err = kms_commit(&d, req, MODESET, NULL);
	if (err) {
		kms_result(false, "%s: head off: %s", name, strerror(-err));
		return;
	}
	req = drmModeAtomicAlloc();
	kms_head_on(&d, req, head, NULL);
	kms_add(d.fd, req, head->primary, PLANE, "FB_ID", pics[PIC_F].fb_id);
	kms_add(d.fd, req, head->crtc_id, CRTC, "GAMMA_LUT", invert);
	since = kms_commit_shown(&d, req, MODESET, &err);
	if (!since || !kms_crc_since(debugfs, head->pipe, since, &crc)) {
		kms_result(false, "%s: %s", name,
			   since ? "no stable CRC" : strerror(-err));
		return;
	}
	kms_result(crc == refs[PIC_INVERTED], "%s%s%08x, expected %08x", name,
		   crc == refs[PIC_INVERTED] ? " # " : ": crc ", crc,
		   refs[PIC_INVERTED]);
	expect(PIC_F, 0, 0, 0, refs[PIC_F], "pipeline-off-after-the-modeset");
}

static void test_known(void)
{
	uint32_t invert256 = lut_blob(256, inverting);
	uint32_t invert2 = lut_blob(2, inverting);
	uint32_t swap = ctm_blob(ctm_swap);

	/* Entry i = (255 - i) * 257: value c lands on entry c exactly. */
	expect(PIC_F, 0, 0, invert256, refs[PIC_INVERTED],
	       "inverting-gamma-lut-256-is-the-inverted-picture");
	/* 2 entries: 0xffff - c * 0xffff / 255 = (255 - c) * 257, exact. */
	expect(PIC_F, invert2, 0, 0, refs[PIC_INVERTED],
	       "inverting-degamma-lut-2-is-the-inverted-picture");
	expect(PIC_F, 0, swap, 0, refs[PIC_SWAPPED],
	       "red-blue-swapping-ctm-is-the-swapped-picture");
	expect(PIC_F, invert256, swap, 0, refs[PIC_INVERTED_SWAPPED],
	       "inverting-degamma-and-swapping-ctm-is-both");
	/* Inverting twice, with the matrix between: the swap alone. */
	expect(PIC_F, invert256, swap, invert2, refs[PIC_SWAPPED],
	       "inverting-degamma-swapping-ctm-inverting-gamma-is-the-swap");
	/* The pipeline applies to what is shown, whatever the picture. */
	expect(PIC_INVERTED, 0, 0, invert256, refs[PIC_F],
	       "inverting-gamma-lut-on-the-inverted-picture-is-f");
	expect(PIC_F, 0, 0, 0, refs[PIC_F], "pipeline-off-is-f");
	test_modeset(invert256);

	drmModeDestroyPropertyBlob(d.fd, invert256);
	drmModeDestroyPropertyBlob(d.fd, invert2);
	drmModeDestroyPropertyBlob(d.fd, swap);
}

/* ------------------------------------------------------------------------ */
/* latched                                                                  */
/* ------------------------------------------------------------------------ */

struct timeline {
	uint32_t count;
	uint64_t time;
};

/* VBLANK_COUNT and VBLANK_TIME of the same vblank. */
static struct timeline timeline_read(void)
{
	uint32_t base = PVDC_HEAD_CONTROL(head->pipe);
	struct timeline t;
	uint32_t again;

	do {
		t.count = kms_reg(bar0, base + PVDC_HEAD_VBLANK_COUNT);
		t.time = kms_reg(bar0, base + PVDC_HEAD_VBLANK_TIME_LO);
		t.time |= (uint64_t)kms_reg(bar0, base +
					    PVDC_HEAD_VBLANK_TIME_HI) << 32;
		again = kms_reg(bar0, base + PVDC_HEAD_VBLANK_COUNT);
	} while (again != t.count);
	return t;
}

static void test_latched(void)
{
	uint32_t period = kms_reg(bar0, PVDC_HEAD_CONTROL(head->pipe) +
				  PVDC_HEAD_FRAME_PERIOD);
	uint32_t invert = lut_blob(256, inverting);
	struct timeline before, after;
	uint32_t crc = 0;
	bool ok;

	before = timeline_read();
	ok = scene(PIC_F, 0, 0, invert, &crc,
		   "gamma-lut-change-commits-without-allow-modeset");
	after = timeline_read();
	if (ok)
		kms_result(crc == refs[PIC_INVERTED],
			   "gamma-lut-change-commits-without-allow-modeset%s%08x",
			   crc == refs[PIC_INVERTED] ? " # " : ": crc ", crc);
	/*
	 * A modeset turns the head off (the count and time freeze) and on
	 * again at a latch point of its own (a new timeline): vblank n of an
	 * unbroken one is at t0 + n * period.
	 */
	kms_result(period && after.count > before.count &&
		   after.time - before.time ==
		   (uint64_t)(after.count - before.count) * period,
		   "gamma-lut-change-keeps-the-vblank-timeline # %u vblanks in %"
		   PRIu64 " ns, period %u", after.count - before.count,
		   after.time - before.time, period);

	before = timeline_read();
	ok = scene(PIC_F, 0, 0, 0, &crc,
		   "gamma-lut-removal-commits-without-allow-modeset");
	after = timeline_read();
	kms_result(ok && crc == refs[PIC_F] && after.count > before.count &&
		   after.time - before.time ==
		   (uint64_t)(after.count - before.count) * period,
		   "gamma-lut-removal-keeps-the-vblank-timeline # %08x", crc);
	drmModeDestroyPropertyBlob(d.fd, invert);
}

/* ------------------------------------------------------------------------ */
/* refusals                                                                 */
/* ------------------------------------------------------------------------ */

/* A TEST_ONLY commit of @prop = a LUT of @n entries: @want expected. */
static void test_only_lut(const char *prop, unsigned int n, int want)
{
	uint32_t blob = lut_blob(n, identity);
	drmModeAtomicReq *req = drmModeAtomicAlloc();
	int ret;

	kms_add(d.fd, req, head->crtc_id, CRTC, prop, blob);
	ret = kms_commit(&d, req, TEST_ONLY, NULL);
	kms_result(ret == want, "test-only-%s-of-%u-entries-%s%s%s", prop, n,
		   want ? "einval" : "accepted", ret == want ? "" : ": ",
		   ret == want ? "" : ret ? strerror(-ret) : "accepted");
	drmModeDestroyPropertyBlob(d.fd, blob);
}

static void test_refusals(void)
{
	uint32_t *before, *after;
	size_t count, count2;

	before = kms_shadow_registers(bar0, &count);
	test_only_lut("GAMMA_LUT", PVDC_LUT_MAX_SIZE + 1, -EINVAL);
	test_only_lut("DEGAMMA_LUT", PVDC_LUT_MAX_SIZE + 1, -EINVAL);
	if (max_gamma < PVDC_LUT_MAX_SIZE)
		test_only_lut("GAMMA_LUT", max_gamma + 1, -EINVAL);
	if (max_degamma < PVDC_LUT_MAX_SIZE)
		test_only_lut("DEGAMMA_LUT", max_degamma + 1, -EINVAL);
	test_only_lut("GAMMA_LUT", 1, -EINVAL);
	test_only_lut("DEGAMMA_LUT", 1, -EINVAL);
	test_only_lut("GAMMA_LUT", max_gamma, 0);
	test_only_lut("DEGAMMA_LUT", max_degamma, 0);
	test_only_lut("GAMMA_LUT", PVDC_LUT_MIN_SIZE, 0);
	after = kms_shadow_registers(bar0, &count2);
	kms_result(count == count2 && !memcmp(before, after, count * 4),
		   "test-only-luts-change-no-device-register");
	free(before);
	free(after);
}

/* ------------------------------------------------------------------------ */
/* legacy                                                                   */
/* ------------------------------------------------------------------------ */

/* drmModeCrtcSetGamma() with @f's ramp; its result. */
static int legacy_gamma(uint16_t (*f)(unsigned int i, unsigned int n),
			uint32_t *size)
{
	drmModeCrtc *crtc = drmModeGetCrtc(d.fd, head->crtc_id);
	uint16_t *ramp;
	unsigned int i, n;
	int ret;

	n = crtc ? crtc->gamma_size : 0;
	drmModeFreeCrtc(crtc);
	*size = n;
	if (!n)
		return -ENODEV;
	ramp = calloc(n, sizeof(*ramp));
	for (i = 0; i < n; i++)
		ramp[i] = f(i, n);
	ret = drmModeCrtcSetGamma(d.fd, head->crtc_id, n, ramp, ramp, ramp);
	free(ramp);
	return ret ? -errno : 0;
}

static void test_legacy(void)
{
	uint64_t blob = 0;
	uint32_t crc = 0, size, since;
	drmModePropertyBlobRes *b = NULL;
	bool ok;
	int ret;

	/* F without a pipeline first. */
	if (!scene(PIC_F, 0, 0, 0, &crc, "legacy-gamma-setup") ||
	    crc != refs[PIC_F]) {
		kms_result(false, "legacy-gamma-setup: crc %08x", crc);
		return;
	}
	ret = legacy_gamma(inverting, &size);
	kms_result(!ret, "legacy-gamma-ioctl-succeeds%s%s", ret ? ": " : "",
		   ret ? strerror(-ret) : "");
	if (ret)
		return;
	/* A blocking commit: it is shown from the next vblank on. */
	since = next_vblank();
	ok = since && kms_crc_since(debugfs, head->pipe, since, &crc);
	kms_result(ok && crc == refs[PIC_INVERTED],
		   "legacy-inverting-gamma-is-the-inverted-picture%s%08x, expected %08x",
		   ok && crc == refs[PIC_INVERTED] ? " # " : ": crc ", crc,
		   refs[PIC_INVERTED]);
	if (kms_prop_value(d.fd, head->crtc_id, CRTC, "GAMMA_LUT", &blob) &&
	    blob)
		b = drmModeGetPropertyBlob(d.fd, blob);
	kms_result(b && b->length == size * sizeof(struct drm_color_lut) &&
		   ((struct drm_color_lut *)b->data)[0].red == 0xffff,
		   "legacy-gamma-ioctl-sets-gamma-lut # %u bytes",
		   b ? b->length : 0);
	drmModeFreePropertyBlob(b);

	ret = legacy_gamma(identity, &size);
	since = ret ? 0 : next_vblank();
	ok = since && kms_crc_since(debugfs, head->pipe, since, &crc);
	kms_result(ok && crc == refs[PIC_F],
		   "legacy-identity-gamma-is-f%s%08x, expected %08x",
		   ok && crc == refs[PIC_F] ? " # " : ": crc ", crc,
		   refs[PIC_F]);
}

/* ------------------------------------------------------------------------ */
/* hold                                                                     */
/* ------------------------------------------------------------------------ */

static void hold(void)
{
	uint32_t invert = lut_blob(256, inverting);
	drmModeAtomicReq *req = drmModeAtomicAlloc();
	sigset_t set;
	int sig, ret;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigprocmask(SIG_BLOCK, &set, NULL);
	kms_add(d.fd, req, head->crtc_id, CRTC, "GAMMA_LUT", invert);
	ret = kms_commit(&d, req, 0, NULL);
	kms_result(!ret, "hold-inverting-gamma-lut%s%s", ret ? ": " : "",
		   ret ? strerror(-ret) : "");
	printf("# holding\n");
	fflush(stdout);
	sigwait(&set, &sig);
}

/* ------------------------------------------------------------------------ */

int main(int argc, char **argv)
{
	int first, ret;

	first = kms_crc_start(argc, argv, &d, &debugfs, "color-setup");
	head = &d.heads[0];
	bar0 = kms_bar_map(d.card, 0, NULL);
	pics_create();
	ret = head_reset();
	if (ret) {
		printf("not ok color-setup: head %u on: %s\n", head->pipe,
		       strerror(-ret));
		return 1;
	}
	printf("# head %u %ux%u\n", head->pipe, head->mode.hdisplay,
	       head->mode.vdisplay);

	max_degamma = PVDC_X(kms_reg(bar0, PVDC_REG_LUT_SIZE));
	max_gamma = PVDC_Y(kms_reg(bar0, PVDC_REG_LUT_SIZE));
	if (kms_wanted(argc, argv, first, "properties"))
		test_properties();

	if (kms_wanted(argc, argv, first, "hold")) {
		hold();
		close(d.fd);
		return kms_failures ? 1 : 0;
	}
	take_refs();
	if (refs_ok) {
		if (kms_wanted(argc, argv, first, "identity"))
			test_identity();
		if (kms_wanted(argc, argv, first, "known"))
			test_known();
		if (kms_wanted(argc, argv, first, "latched"))
			test_latched();
	}
	if (kms_wanted(argc, argv, first, "refusals"))
		test_refusals();
	if (refs_ok && kms_wanted(argc, argv, first, "legacy"))
		test_legacy();
	ret = head_reset();
	kms_result(!ret, "pipeline-off-at-the-end%s%s", ret ? ": " : "",
		   ret ? strerror(-ret) : "");

	close(d.fd);
	return kms_failures ? 1 : 0;
}
