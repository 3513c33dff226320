// SPDX-License-Identifier: GPL-2.0-or-later OR MIT
/*
 * pvdc-writeback: writeback connectors.  On the first connected head, its
 * writeback connector attached once (a modeset), then:
 *
 *   properties  With DRM_CLIENT_CAP_WRITEBACK_CONNECTORS the client sees
 *               one writeback connector per head of the device, each for
 *               its own CRTC only, whose WRITEBACK_PIXEL_FORMATS are the
 *               device's FORMATS_WRITEBACK; without the cap it sees none.
 *   scene       Colour bars on the primary plane, an ARGB overlay blended
 *               with a plane alpha and scaled; a commit of WRITEBACK_FB_ID
 *               alone (no ALLOW_MODESET) with WRITEBACK_OUT_FENCE_PTR: the
 *               out fence signals without error, and the CRC-32 of the
 *               written pixels (0x00RRGGBB words, row by row) is the pipe
 *               CRC of the frames the commit's event says it is shown
 *               from.  The target holds a sentinel before.
 *   gamma       With an inverting GAMMA_LUT, the written pixels are the
 *               inverted picture, pixel for pixel (the colour pipeline
 *               applies); without, the picture itself.
 *   formats     Each writeback format writes every pixel of a picture
 *               whose channels differ in the format's channel order, with
 *               0xff in the top byte; XRGB2101010 with its padding bits
 *               set and each 8-bit channel c widened to c << 2 | c >> 6.
 *   once        The same job committed twice in a row writes twice; a
 *               page flip, then legacy cursor moves, after a commit with
 *               a job write nothing more into its target (refilled with
 *               the sentinel; checked after two more vblanks).
 *   refusals    TEST_ONLY refuses with EINVAL a target smaller than the
 *               mode, one of a format not in the list (RGB565), and a job
 *               on an inactive CRTC (the same commits without the job are
 *               accepted), ADDFB2 one at a misaligned offset; no shadow
 *               register of the device changes meanwhile.
 *
 *   hold        Not a test: the scene and its writeback; prints
 *               "# written-crc32 X" and "# holding", waits for SIGTERM
 *               (the host compares the head's screendump).
 *
 * Usage: pvdc-writeback [-d DEBUGFS-DIR] [-c DEVICE] [TEST...]; every test
 * when none is named.  Reads BAR 0: boot with iomem=relaxed.
 */
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <linux/sync_file.h>

#include "pvdc-kms-util.h"
#include "pvdc-regs.h"

#define TEST_ONLY	DRM_MODE_ATOMIC_TEST_ONLY
#define MODESET		DRM_MODE_ATOMIC_ALLOW_MODESET
#define CRTC		DRM_MODE_OBJECT_CRTC
#define PLANE		DRM_MODE_OBJECT_PLANE
#define CONNECTOR	DRM_MODE_OBJECT_CONNECTOR

#define SENTINEL	0x5a17e1u

static struct kms_display d;
static struct kms_head *head;
static const char *debugfs = KMS_DEBUGFS;
static volatile uint32_t *bar0;
static uint32_t wb_conn;			/* the head's writeback connector */
static uint32_t overlay;
static struct kms_buffer overlay_buf, pic_f, target;
/* The target as it was when its out fence signalled. */
static struct kms_buffer shot;

/* ------------------------------------------------------------------------ */
/* Pixels                                                                   */
/* ------------------------------------------------------------------------ */

/* zlib's crc32(), as the device's frame CRCs. */
static uint32_t crc32_update(uint32_t crc, const uint8_t *p, size_t len)
{
	static uint32_t table[256];
	uint32_t c, i, k;

	if (!table[1]) {
		for (i = 0; i < 256; i++) {
			for (c = i, k = 0; k < 8; k++)
				c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
			table[i] = c;
		}
	}
	crc = ~crc;
	while (len--)
		crc = table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return ~crc;
}

/*
 * An XRGB2101010 pixel as 0xAARRGGBB: the padding bits and each 10-bit
 * channel's two low bits, which must widen its 8 high bits c as the spec
 * says (c << 2 | c >> 6), are folded into the alpha byte, 0xff when exact.
 */
static uint32_t from_2101010(uint32_t v)
{
	uint32_t argb = (v >> 30 == 3) ? 0xff000000 : 0;
	unsigned int i;

	for (i = 0; i < 3; i++) {
		uint32_t c10 = v >> (10 * i) & 0x3ff, c8 = c10 >> 2;

		if (c10 != (c8 << 2 | c8 >> 6))
			argb = 0;
		else
			argb |= c8 << (8 * i);
	}
	return argb;
}

/* A target pixel of @format as 0xAARRGGBB. */
static uint32_t to_argb(uint32_t format, uint32_t v)
{
	if (format == DRM_FORMAT_XBGR8888 || format == DRM_FORMAT_ABGR8888)
		return (v & 0xff00ff00) | (v & 0xff) << 16 | (v >> 16 & 0xff);
	if (format == DRM_FORMAT_XRGB2101010)
		return from_2101010(v);
	return v;
}

/* What the pixel at @x, @y of @buf holds, as 0xAARRGGBB. */
static uint32_t pixel(const struct kms_buffer *buf, uint32_t x, uint32_t y)
{
	const uint8_t *line = (const uint8_t *)buf->map +
			      (size_t)y * buf->pitch;

	return to_argb(buf->format, ((const uint32_t *)line)[x]);
}

/* The CRC-32 of @buf's pixels as the device's frame CRC takes them. */
static uint32_t buffer_crc(const struct kms_buffer *buf)
{
	uint32_t *row = malloc((size_t)buf->width * 4);
	uint32_t crc = 0, x, y;

	for (y = 0; y < buf->height; y++) {
		for (x = 0; x < buf->width; x++) {
			uint32_t v = pixel(buf, x, y) & 0xffffff;
			uint8_t *b = (uint8_t *)&row[x];

			b[0] = v;
			b[1] = v >> 8;
			b[2] = v >> 16;
			b[3] = 0;
		}
		crc = crc32_update(crc, (uint8_t *)row, (size_t)buf->width * 4);
	}
	free(row);
	return crc;
}

static void buffer_set(struct kms_buffer *buf, uint32_t value)
{
	uint32_t x, y;

	for (y = 0; y < buf->height; y++)
		for (x = 0; x < buf->width; x++)
			((uint32_t *)((uint8_t *)buf->map +
				      (size_t)y * buf->pitch))[x] = value;
}

/* Pixels of @buf that are not the sentinel. */
static uint64_t not_sentinel(const struct kms_buffer *buf)
{
	uint64_t n = 0;
	uint32_t x, y;

	for (y = 0; y < buf->height; y++)
		for (x = 0; x < buf->width; x++)
			n += ((uint32_t *)((uint8_t *)buf->map +
					   (size_t)y * buf->pitch))[x] !=
			     SENTINEL;
	return n;
}

/* Picture F: red, green and blue differ almost everywhere. */
static uint32_t f_pixel(uint32_t x, uint32_t y)
{
	uint32_t r = x & 0xff, g = y & 0xff, b = (x * 7 + y * 13 + 85) & 0xff;

	return 0xff000000 | r << 16 | g << 8 | b;
}

static void buffer_create(struct kms_buffer *buf, uint32_t w, uint32_t h,
			  uint32_t format)
{
	if (kms_buffer_create(d.fd, buf, w, h, format)) {
		printf("not ok writeback-setup: %ux%u buffer: %s\n", w, h,
		       strerror(errno));
		exit(1);
	}
}

static void pictures_create(void)
{
	uint32_t x, y, w = head->mode.hdisplay, h = head->mode.vdisplay;

	buffer_create(&pic_f, w, h, DRM_FORMAT_XRGB8888);
	for (y = 0; y < h; y++)
		for (x = 0; x < w; x++)
			((uint32_t *)((uint8_t *)pic_f.map +
				      (size_t)y * pic_f.pitch))[x] =
				f_pixel(x, y);
	/* Premultiplied ARGB, alpha and colours varying: scaled, blended. */
	buffer_create(&overlay_buf, 64, 48, DRM_FORMAT_ARGB8888);
	for (y = 0; y < 48; y++)
		for (x = 0; x < 64; x++) {
			uint32_t a = 0x40 + x * 3, r = a * x / 64,
				 g = a * y / 48, b = a / 2;

			((uint32_t *)((uint8_t *)overlay_buf.map +
				      (size_t)y * overlay_buf.pitch))[x] =
				a << 24 | r << 16 | g << 8 | b;
		}
	buffer_create(&target, w, h, DRM_FORMAT_XRGB8888);
}

/* ------------------------------------------------------------------------ */
/* Commits                                                                  */
/* ------------------------------------------------------------------------ */

/*
 * The head on with the scene (primary colour bars, the overlay scaled and
 * blended) or picture F alone, its writeback connector attached.
 */
static int head_setup(bool scene)
{
	drmModeAtomicReq *req = drmModeAtomicAlloc();
	unsigned int i;

	kms_head_on(&d, req, head, NULL);
	if (!scene)
		kms_add(d.fd, req, head->primary, PLANE, "FB_ID", pic_f.fb_id);
	for (i = 0; i < d.num_planes; i++)
		if (d.planes[i] != head->primary && d.planes[i] != overlay &&
		    d.plane_crtcs[i] & 1u << head->pipe)
			kms_plane_off(&d, req, d.planes[i]);
	if (scene) {
		kms_plane_set(&d, req, overlay, head, &overlay_buf, 40, 30,
			      head->mode.hdisplay / 2, head->mode.vdisplay / 2);
		kms_add(d.fd, req, overlay, PLANE, "alpha", 0xc000);
	} else {
		kms_plane_off(&d, req, overlay);
	}
	if (kms_prop_id(d.fd, head->crtc_id, CRTC, "GAMMA_LUT"))
		kms_add(d.fd, req, head->crtc_id, CRTC, "GAMMA_LUT", 0);
	kms_add(d.fd, req, wb_conn, CONNECTOR, "CRTC_ID", head->crtc_id);
	return kms_commit(&d, req, MODESET, NULL);
}

static void page_flip_handler(int fd, unsigned int seq, unsigned int sec,
			      unsigned int usec, unsigned int crtc, void *data)
{
	(void)fd; (void)sec; (void)usec; (void)crtc;
	*(unsigned int *)data = seq;
}

static uint32_t head_reg(uint32_t reg)
{
	return kms_reg(bar0, PVDC_HEAD_CONTROL(head->pipe) + reg);
}

/* A register of the head's active (latched) state. */
static uint32_t active_reg(uint32_t reg)
{
	return kms_reg(bar0, PVDC_HEAD_ACTIVE(head->pipe) + reg);
}

/*
 * Commit @req (freed) with WRITEBACK_FB_ID @buf and an out fence, without
 * ALLOW_MODESET, nonblocking, with an event.  Polls the fence; once it
 * signals, the device must have latched the commit's doorbell (DONE_SEQ
 * caught up with an ARMED_SEQ that moved) and @buf is copied to shot at
 * once; then reads the event: the vblank the commit is shown from, 0 on
 * failure (a "not ok" line for @name).
 */
static uint32_t commit_writeback(drmModeAtomicReq *req,
				 struct kms_buffer *buf, const char *name)
{
	drmEventContext ev = {
		.version = 3,
		.page_flip_handler2 = page_flip_handler,
	};
	struct pollfd pfd = { .fd = d.fd, .events = POLLIN };
	struct sync_file_info info = { 0 };
	uint32_t armed0 = head_reg(PVDC_HEAD_ARMED_SEQ), armed, done;
	unsigned int seq = 0;
	int32_t fence = -1;
	int ret;

	kms_add(d.fd, req, wb_conn, CONNECTOR, "WRITEBACK_FB_ID", buf->fb_id);
	kms_add(d.fd, req, wb_conn, CONNECTOR, "WRITEBACK_OUT_FENCE_PTR",
		(uint64_t)(uintptr_t)&fence);
	ret = kms_commit(&d, req, DRM_MODE_ATOMIC_NONBLOCK |
			 DRM_MODE_PAGE_FLIP_EVENT, &seq);
	if (ret || fence < 0) {
		kms_result(false, "%s: commit: %s, fence %d", name,
			   strerror(-ret), fence);
		return 0;
	}
	/* The device completes it: no timeout but the DRM core's own. */
	pfd.fd = fence;
	ret = poll(&pfd, 1, 10000);
	done = head_reg(PVDC_HEAD_DONE_SEQ);
	armed = head_reg(PVDC_HEAD_ARMED_SEQ);
	free(shot.map);
	shot = *buf;
	shot.map = malloc(buf->size);
	memcpy(shot.map, buf->map, buf->size);
	if (ret == 1 && ioctl(fence, SYNC_IOC_FILE_INFO, &info))
		info.status = -errno;
	close(fence);
	if (ret == 1 && (armed == armed0 || done != armed)) {
		kms_result(false, "%s: fence signalled before the latch: ARMED_SEQ %u, then %u, DONE_SEQ %u",
			   name, armed0, armed, done);
		return 0;
	}
	if (ret != 1 || info.status != 1) {
		kms_result(false, "%s: out fence: poll %d, status %d", name, ret,
			   info.status);
		return 0;
	}
	pfd.fd = d.fd;
	while (!seq && poll(&pfd, 1, 10000) > 0)
		drmHandleEvent(d.fd, &ev);
	if (!seq)
		kms_result(false, "%s: no event", name);
	return seq;
}

/* ------------------------------------------------------------------------ */
/* properties                                                               */
/* ------------------------------------------------------------------------ */

/* The device's writeback formats, from its format table. */
static unsigned int device_formats(uint32_t *formats)
{
	uint32_t mask = kms_reg(bar0, PVDC_REG_FORMATS_WRITEBACK);
	unsigned int i, n = 0;

	for (i = 0; i < PVDC_MAX_FORMATS; i++) {
		uint32_t fourcc = kms_reg(bar0, PVDC_REG_FORMAT_TABLE(i));

		if (!fourcc)
			break;
		if (mask & 1u << i)
			formats[n++] = fourcc;
	}
	return n;
}

/* Writeback connectors @fd sees; their CRTC masks in @crtcs. */
static unsigned int writeback_connectors(int fd, uint32_t *ids,
					 uint32_t *crtcs)
{
	drmModeRes *res = drmModeGetResources(fd);
	unsigned int n = 0;
	int i;

	for (i = 0; res && i < res->count_connectors; i++) {
		drmModeConnector *c = drmModeGetConnector(fd,
							  res->connectors[i]);
		drmModeEncoder *e;

		if (!c || c->connector_type != DRM_MODE_CONNECTOR_WRITEBACK) {
			drmModeFreeConnector(c);
			continue;
		}
		e = c->count_encoders ? drmModeGetEncoder(fd, c->encoders[0]) :
		    NULL;
		if (ids)
			ids[n] = c->connector_id;
		if (crtcs)
			crtcs[n] = e ? e->possible_crtcs : 0;
		n++;
		drmModeFreeEncoder(e);
		drmModeFreeConnector(c);
	}
	drmModeFreeResources(res);
	return n;
}

static bool formats_equal(uint32_t conn, const uint32_t *want, unsigned int n)
{
	drmModePropertyBlobRes *blob = NULL;
	uint64_t id = 0;
	bool ok;

	if (kms_prop_value(d.fd, conn, CONNECTOR, "WRITEBACK_PIXEL_FORMATS",
			   &id) && id)
		blob = drmModeGetPropertyBlob(d.fd, id);
	ok = blob && blob->length == n * 4 && !memcmp(blob->data, want, n * 4);
	drmModeFreePropertyBlob(blob);
	return ok;
}

static void test_properties(int plain_fd)
{
	uint32_t heads = kms_reg(bar0, PVDC_REG_NUM_HEADS);
	uint32_t ids[KMS_MAX_HEADS * 2], crtcs[KMS_MAX_HEADS * 2];
	uint32_t formats[PVDC_MAX_FORMATS], seen = 0;
	unsigned int n, i, nf = device_formats(formats);
	bool one_each = true, fmt_ok = true;

	n = writeback_connectors(d.fd, ids, crtcs);
	for (i = 0; i < n; i++) {
		/* Exactly one CRTC each, every CRTC once. */
		if (!crtcs[i] || crtcs[i] & (crtcs[i] - 1) || seen & crtcs[i])
			one_each = false;
		seen |= crtcs[i];
		if (!formats_equal(ids[i], formats, nf))
			fmt_ok = false;
	}
	kms_result(n == heads && one_each && seen == (1u << heads) - 1,
		   "one-writeback-connector-per-head-for-its-crtc # %u connectors, %u heads, crtcs %#x",
		   n, heads, seen);
	kms_result(n && nf && fmt_ok,
		   "writeback-pixel-formats-are-the-device-formats # %u formats",
		   nf);
	n = writeback_connectors(plain_fd, NULL, NULL);
	kms_result(!n, "no-writeback-connector-without-the-client-cap # %u",
		   n);
}

/* ------------------------------------------------------------------------ */
/* scene, hold                                                              */
/* ------------------------------------------------------------------------ */

/* The scene written into the target: its CRC, 0 with a "not ok" line. */
static bool scene_writeback(uint32_t *written, uint32_t *since)
{
	int ret = head_setup(true);

	if (ret) {
		kms_result(false, "scene-setup: %s", strerror(-ret));
		return false;
	}
	buffer_set(&target, SENTINEL);
	*since = commit_writeback(drmModeAtomicAlloc(), &target,
				  "scene-out-fence-signals");
	if (!*since)
		return false;
	kms_result(true, "scene-out-fence-signals");
	*written = buffer_crc(&shot);
	return true;
}

static void test_scene(void)
{
	uint32_t written = 0, crc = 0, since;
	bool ok;

	if (!scene_writeback(&written, &since))
		return;
	ok = kms_crc_since(debugfs, head->pipe, since, &crc);
	kms_result(ok && crc == written,
		   "scene-written-pixels-are-the-pipe-crc # written %08x, pipe %08x since vblank %u, %" PRIu64 " pixels written",
		   written, crc, since, not_sentinel(&shot));
}

static void hold(void)
{
	uint32_t written = 0, since;
	sigset_t set;
	int sig;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigprocmask(SIG_BLOCK, &set, NULL);
	if (!scene_writeback(&written, &since))
		return;
	printf("# written-crc32 %08x\n# holding\n", written);
	fflush(stdout);
	sigwait(&set, &sig);
}

/* ------------------------------------------------------------------------ */
/* gamma, formats                                                           */
/* ------------------------------------------------------------------------ */

/*
 * Picture F (@inverted: through an inverting GAMMA_LUT of 256 entries)
 * written into @buf: pixels that differ from what the spec predicts.
 */
static uint64_t f_written(struct kms_buffer *buf, bool inverted,
			  const char *name, bool *ok)
{
	drmModeAtomicReq *req = drmModeAtomicAlloc();
	uint32_t x, y, blob = 0;
	uint64_t wrong = 0;

	*ok = false;
	if (inverted) {
		struct drm_color_lut lut[256];
		unsigned int i;

		for (i = 0; i < 256; i++)
			lut[i].red = lut[i].green = lut[i].blue =
				(255 - i) * 257;
		if (drmModeCreatePropertyBlob(d.fd, lut, sizeof(lut), &blob)) {
			kms_result(false, "%s: blob: %s", name, strerror(errno));
			drmModeAtomicFree(req);
			return 0;
		}
	}
	if (kms_prop_id(d.fd, head->crtc_id, CRTC, "GAMMA_LUT"))
		kms_add(d.fd, req, head->crtc_id, CRTC, "GAMMA_LUT", blob);
	buffer_set(buf, SENTINEL);
	if (!commit_writeback(req, buf, name))
		goto out;
	*ok = true;
	for (y = 0; y < buf->height; y++)
		for (x = 0; x < buf->width; x++) {
			uint32_t want = f_pixel(x, y);

			if (inverted)
				want ^= 0xffffff;
			wrong += pixel(&shot, x, y) != want;
		}
out:
	if (blob)
		drmModeDestroyPropertyBlob(d.fd, blob);
	return wrong;
}

static void test_gamma(void)
{
	uint64_t wrong;
	bool ok;
	int ret;

	if (!kms_prop_id(d.fd, head->crtc_id, CRTC, "GAMMA_LUT")) {
		printf("ok gamma # skip no colour pipeline\n");
		return;
	}
	ret = head_setup(false);
	if (ret) {
		kms_result(false, "gamma-setup: %s", strerror(-ret));
		return;
	}
	wrong = f_written(&target, true, "inverting-gamma-lut-is-written",
			  &ok);
	if (ok)
		kms_result(!wrong,
			   "inverting-gamma-lut-is-written # %" PRIu64 " pixels wrong",
			   wrong);
	wrong = f_written(&target, false, "no-gamma-lut-writes-the-picture",
			  &ok);
	if (ok)
		kms_result(!wrong,
			   "no-gamma-lut-writes-the-picture # %" PRIu64 " pixels wrong",
			   wrong);
}

static void test_formats(void)
{
	uint32_t formats[PVDC_MAX_FORMATS];
	unsigned int i, n = device_formats(formats);
	char name[96];
	int ret;

	ret = head_setup(false);
	if (ret) {
		kms_result(false, "formats-setup: %s", strerror(-ret));
		return;
	}
	for (i = 0; i < n; i++) {
		struct kms_buffer buf;
		uint64_t wrong;
		bool ok;

		snprintf(name, sizeof(name), "format-%.4s-channel-order",
			 (const char *)&formats[i]);
		buffer_create(&buf, head->mode.hdisplay, head->mode.vdisplay,
			      formats[i]);
		wrong = f_written(&buf, false, name, &ok);
		if (ok)
			kms_result(!wrong, "%s # %" PRIu64 " pixels wrong, first %08x; device latched %.4s at %#x, pitch %u",
				   name, wrong, pixel(&shot, 0, 0),
				   (const char *)&(uint32_t){ active_reg(PVDC_HS_WB_FORMAT) },
				   active_reg(PVDC_HS_WB_OFFSET),
				   active_reg(PVDC_HS_WB_PITCH));
		kms_buffer_destroy(d.fd, &buf);
	}
}

/* ------------------------------------------------------------------------ */
/* once                                                                     */
/* ------------------------------------------------------------------------ */

/* Two vblanks after the next: whatever was armed before has latched. */
static bool vblanks_pass(void)
{
	drmVBlank vbl = { 0 };

	vbl.request.type = DRM_VBLANK_RELATIVE |
			   (head->pipe << DRM_VBLANK_HIGH_CRTC_SHIFT);
	vbl.request.sequence = 3;
	return !drmWaitVBlank(d.fd, &vbl);
}

static void test_once(void)
{
	struct kms_buffer cursor;
	drmModeAtomicReq *req;
	uint64_t written;
	int ret, err, i;
	bool ok;

	ret = head_setup(false);
	if (ret) {
		kms_result(false, "once-setup: %s", strerror(-ret));
		return;
	}
	buffer_create(&cursor, 64, 64, DRM_FORMAT_ARGB8888);
	buffer_set(&cursor, 0xff00ff00);
	ret = drmModeSetCursor(d.fd, head->crtc_id, cursor.handle, 64, 64);
	if (ret) {
		kms_result(false, "once-setup: cursor: %s", strerror(errno));
		return;
	}
	buffer_set(&target, SENTINEL);
	if (!commit_writeback(drmModeAtomicAlloc(), &target,
			      "once-writeback"))
		return;
	written = not_sentinel(&shot);
	kms_result(written == (uint64_t)target.width * target.height,
		   "once-writeback-writes-the-target # %" PRIu64 " pixels",
		   written);

	/* The same job again, nothing else changed: a write again. */
	buffer_set(&target, SENTINEL);
	if (!commit_writeback(drmModeAtomicAlloc(), &target,
			      "writeback-right-after-writeback"))
		return;
	written = not_sentinel(&shot);
	kms_result(written == (uint64_t)target.width * target.height,
		   "writeback-right-after-writeback-writes-again # %" PRIu64 " pixels",
		   written);

	buffer_set(&target, SENTINEL);
	req = drmModeAtomicAlloc();
	kms_add(d.fd, req, head->primary, PLANE, "FB_ID", head->buf[1].fb_id);
	ok = kms_commit_shown(&d, req, 0, &err) && vblanks_pass();
	kms_result(ok && !not_sentinel(&target),
		   "page-flip-after-writeback-writes-nothing # %s, %" PRIu64 " pixels",
		   ok ? "flipped" : strerror(-err), not_sentinel(&target));

	/* A job again, then cursor updates (they ring doorbells of their own). */
	buffer_set(&target, SENTINEL);
	if (!commit_writeback(drmModeAtomicAlloc(), &target,
			      "once-writeback-again"))
		return;
	buffer_set(&target, SENTINEL);
	ok = true;
	for (i = 0; i < 8 && ok; i++)
		ok = !drmModeMoveCursor(d.fd, head->crtc_id, 10 + i * 20, 30);
	ok = ok && vblanks_pass();
	kms_result(ok && !not_sentinel(&target),
		   "cursor-moves-after-writeback-write-nothing # %" PRIu64 " pixels",
		   not_sentinel(&target));
	drmModeSetCursor(d.fd, head->crtc_id, 0, 0, 0);
	kms_buffer_destroy(d.fd, &cursor);
}

/* ------------------------------------------------------------------------ */
/* refusals                                                                 */
/* ------------------------------------------------------------------------ */

/* TEST_ONLY (and @flags) of @req with WRITEBACK_FB_ID @fb: errno or 0. */
static int test_only(drmModeAtomicReq *req, uint32_t fb, uint32_t flags)
{
	if (fb)
		kms_add(d.fd, req, wb_conn, CONNECTOR, "WRITEBACK_FB_ID", fb);
	return kms_commit(&d, req, TEST_ONLY | flags, NULL);
}

static void expect(int ret, int want, const char *name)
{
	kms_result(ret == want, "%s%s%s", name, ret == want ? "" : ": ",
		   ret == want ? "" : ret ? strerror(-ret) : "accepted");
}

static void test_refusals(void)
{
	uint32_t w = head->mode.hdisplay, h = head->mode.vdisplay;
	uint32_t handles[4] = { 0 }, pitches[4] = { 0 }, offsets[4] = { 0 };
	uint32_t formats[PVDC_MAX_FORMATS], misaligned = 0, align;
	struct kms_buffer small, rgb565, big;
	uint32_t *before, *after;
	size_t count, count2;
	drmModeAtomicReq *req;
	unsigned int i, n = device_formats(formats);
	bool has565 = false;
	int ret;

	ret = head_setup(false);
	if (ret) {
		kms_result(false, "refusals-setup: %s", strerror(-ret));
		return;
	}
	for (i = 0; i < n; i++)
		has565 |= formats[i] == DRM_FORMAT_RGB565;
	buffer_create(&small, w - 8, h, DRM_FORMAT_XRGB8888);
	buffer_create(&rgb565, w, h, DRM_FORMAT_RGB565);
	/*
	 * A line more, the framebuffer starting at a misaligned offset:
	 * refused by ADDFB2 already, as the device could not read it either.
	 */
	buffer_create(&big, w, h + 1, DRM_FORMAT_XRGB8888);
	align = kms_reg(bar0, PVDC_REG_OFFSET_ALIGN);
	handles[0] = big.handle;
	pitches[0] = big.pitch;
	offsets[0] = align / 2;
	ret = offsets[0] ? drmModeAddFB2(d.fd, w, h, DRM_FORMAT_XRGB8888,
					 handles, pitches, offsets,
					 &misaligned, 0) : 0;
	if (ret)
		ret = -errno;

	before = kms_shadow_registers(bar0, &count);
	expect(test_only(drmModeAtomicAlloc(), target.fb_id, 0), 0,
	       "test-only-target-of-the-mode-size-accepted");
	expect(test_only(drmModeAtomicAlloc(), small.fb_id, 0), -EINVAL,
	       "test-only-target-narrower-than-the-mode-einval");
	if (has565)
		printf("ok test-only-rgb565-target-einval # skip the device writes RGB565\n");
	else
		expect(test_only(drmModeAtomicAlloc(), rgb565.fb_id, 0),
		       -EINVAL, "test-only-rgb565-target-einval");
	if (offsets[0])
		expect(ret, -EINVAL, "addfb2-target-at-a-misaligned-offset-einval");
	else
		printf("ok addfb2-target-at-a-misaligned-offset-einval # skip OFFSET_ALIGN %u\n",
		       align);

	/* The CRTC enabled with its mode, but not active. */
	req = drmModeAtomicAlloc();
	kms_add(d.fd, req, head->crtc_id, CRTC, "ACTIVE", 0);
	expect(test_only(req, 0, MODESET), 0,
	       "test-only-inactive-crtc-without-a-job-accepted");
	req = drmModeAtomicAlloc();
	kms_add(d.fd, req, head->crtc_id, CRTC, "ACTIVE", 0);
	expect(test_only(req, target.fb_id, MODESET), -EINVAL,
	       "test-only-job-on-an-inactive-crtc-einval");

	after = kms_shadow_registers(bar0, &count2);
	kms_result(count == count2 && !memcmp(before, after, count * 4),
		   "test-only-refusals-change-no-device-register");
	free(before);
	free(after);
	if (misaligned)
		drmModeRmFB(d.fd, misaligned);
	kms_buffer_destroy(d.fd, &small);
	kms_buffer_destroy(d.fd, &rgb565);
	kms_buffer_destroy(d.fd, &big);
}

/* ------------------------------------------------------------------------ */

/* The writeback connector of the head's CRTC, 0 if none. */
static uint32_t find_writeback(void)
{
	uint32_t ids[KMS_MAX_HEADS * 2], crtcs[KMS_MAX_HEADS * 2];
	unsigned int n = writeback_connectors(d.fd, ids, crtcs), i;

	for (i = 0; i < n; i++)
		if (crtcs[i] == 1u << head->pipe)
			return ids[i];
	return 0;
}

/* Detach the writeback connector: later clients do not know it. */
static int detach(void)
{
	drmModeAtomicReq *req = drmModeAtomicAlloc();

	kms_add(d.fd, req, wb_conn, CONNECTOR, "CRTC_ID", 0);
	kms_plane_off(&d, req, overlay);
	return kms_commit(&d, req, MODESET, NULL);
}

int main(int argc, char **argv)
{
	static const char *const tests[] = {
		"scene", "gamma", "formats", "once", "refusals", "hold",
	};
	unsigned int i;
	int first, ret, plain_fd;

	first = kms_crc_start(argc, argv, &d, &debugfs, "writeback-setup");
	head = &d.heads[0];
	bar0 = kms_bar_map(d.card, 0, NULL);
	/* A client of the atomic uAPI that does not ask for them. */
	plain_fd = kms_open_atomic(d.card);
	if (drmSetClientCap(d.fd, DRM_CLIENT_CAP_WRITEBACK_CONNECTORS, 1)) {
		printf("not ok writeback-cap: %s\n", strerror(errno));
		return 1;
	}
	if (kms_wanted(argc, argv, first, "properties"))
		test_properties(plain_fd);
	close(plain_fd);
	wb_conn = find_writeback();
	overlay = kms_overlay(&d, 0);
	if (!wb_conn || !overlay) {
		for (i = 0; i < sizeof(tests) / sizeof(tests[0]); i++)
			if (kms_wanted(argc, argv, first, tests[i]))
				printf("ok %s # skip %s\n", tests[i],
				       !wb_conn ? "no writeback connector" :
				       "no overlay plane");
		if (!wb_conn)
			printf("not ok writeback-connector-of-head-%u\n",
			       head->pipe);
		close(d.fd);
		return kms_failures ? 1 : 0;
	}
	printf("# head %u %ux%u, writeback connector %u\n", head->pipe,
	       head->mode.hdisplay, head->mode.vdisplay, wb_conn);
	pictures_create();

	if (kms_wanted(argc, argv, first, "hold")) {
		hold();
		close(d.fd);
		return kms_failures ? 1 : 0;
	}
	if (kms_wanted(argc, argv, first, "scene"))
		test_scene();
	if (kms_wanted(argc, argv, first, "gamma"))
		test_gamma();
	if (kms_wanted(argc, argv, first, "formats"))
		test_formats();
	if (kms_wanted(argc, argv, first, "once"))
		test_once();
	if (kms_wanted(argc, argv, first, "refusals"))
		test_refusals();
	ret = detach();
	kms_result(!ret, "writeback-connector-detached-at-the-end%s%s",
		   ret ? ": " : "", ret ? strerror(-ret) : "");

	close(d.fd);
	return kms_failures ? 1 : 0;
}
