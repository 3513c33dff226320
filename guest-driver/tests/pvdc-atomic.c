// SPDX-License-Identifier: GPL-2.0-or-later OR MIT
/*
 * pvdc-atomic: the atomic uAPI contract of the pvdc driver.
 *
 * Checks that atomic_check predicts what the device accepts, with TEST_ONLY
 * commits where possible:
 *   - a modeset needs DRM_MODE_ATOMIC_ALLOW_MODESET, a page flip does not;
 *   - the scaler pool is shared by all heads and cannot be over-subscribed;
 *   - a head keeps the bandwidth it was enabled with: a plane update that
 *     needs more is refused, never turned into a modeset, and heads
 *     enabled together split the device total by what they need;
 *   - a plane moves to another head only once disabled on the old one;
 *   - cursor limits (size, no scaling) and the hotspot properties;
 * then runs nonblocking page flips on every head and counts their events,
 * and checks that a nonblocking commit overlapping a pending one on the
 * same head is refused with EBUSY while another head can still flip.
 *
 * Assumes the device defaults: 3 overlays per head, 256x256 cursor, max
 * size at least 4096x1600, VRAM for it.  The bandwidth cases need the
 * device's allocation of each head, HEAD_KIB (bandwidth-kib / heads): a
 * primary and two 1920x1080 XRGB8888 overlays must fit in it, a third
 * overlay not.
 * Usage: pvdc-atomic [-s SCALERS] [-f FLIPS] [-b HEAD_KIB] [DEVICE];
 * SCALERS defaults to 2, FLIPS to 60; without HEAD_KIB the bandwidth
 * cases are skipped.
 */
#include <poll.h>
#include <time.h>

#include "pvdc-kms-util.h"

#define MAX_HEADS	8
#define MAX_PLANES	80
#define SMALL_W		320
#define SMALL_H		180
#define BIG_W		1920
#define BIG_H		1080
#define CURSOR_W	64
#define CURSOR_MAX	256

struct plane {
	uint32_t id;
	uint64_t type;
	uint32_t possible_crtcs;
};

struct head {
	uint32_t crtc_id, conn_id, mode_blob;
	int pipe;
	drmModeModeInfo mode;
	struct plane *primary, *cursor;
	struct kms_buffer buf[2];
	unsigned int front;
	/* flips */
	unsigned int events;
	bool pending;
	unsigned int last_seq;
	double last_time;
	double queued;		/* when the pending flip was committed */
	bool order_ok;
	bool time_ok;
};

static int fd;
static struct head heads[MAX_HEADS];
static int num_heads;
static struct plane planes[MAX_PLANES];
static int num_planes;

/* ------------------------------------------------------------------------ */
/* Atomic request helpers                                                   */
/* ------------------------------------------------------------------------ */

static void add(drmModeAtomicReq *req, uint32_t obj, uint32_t type,
		const char *name, uint64_t value)
{
	uint32_t prop = kms_prop_id(fd, obj, type, name);

	if (!prop) {
		printf("# object %u has no property %s\n", obj, name);
		return;
	}
	drmModeAtomicAddProperty(req, obj, prop, value);
}

static void plane_set(drmModeAtomicReq *req, const struct plane *p,
		      const struct head *h, const struct kms_buffer *buf,
		      uint32_t sw, uint32_t sh, int32_t x, int32_t y,
		      uint32_t w, uint32_t hh)
{
	uint32_t t = DRM_MODE_OBJECT_PLANE;

	add(req, p->id, t, "FB_ID", buf->fb_id);
	add(req, p->id, t, "CRTC_ID", h->crtc_id);
	add(req, p->id, t, "SRC_X", 0);
	add(req, p->id, t, "SRC_Y", 0);
	add(req, p->id, t, "SRC_W", (uint64_t)sw << 16);
	add(req, p->id, t, "SRC_H", (uint64_t)sh << 16);
	add(req, p->id, t, "CRTC_X", (uint64_t)(int64_t)x);
	add(req, p->id, t, "CRTC_Y", (uint64_t)(int64_t)y);
	add(req, p->id, t, "CRTC_W", w);
	add(req, p->id, t, "CRTC_H", hh);
}

static void plane_off(drmModeAtomicReq *req, const struct plane *p)
{
	add(req, p->id, DRM_MODE_OBJECT_PLANE, "FB_ID", 0);
	add(req, p->id, DRM_MODE_OBJECT_PLANE, "CRTC_ID", 0);
}

static void head_on(drmModeAtomicReq *req, struct head *h)
{
	add(req, h->crtc_id, DRM_MODE_OBJECT_CRTC, "MODE_ID", h->mode_blob);
	add(req, h->crtc_id, DRM_MODE_OBJECT_CRTC, "ACTIVE", 1);
	add(req, h->conn_id, DRM_MODE_OBJECT_CONNECTOR, "CRTC_ID", h->crtc_id);
	plane_set(req, h->primary, h, &h->buf[h->front], h->mode.hdisplay,
		  h->mode.vdisplay, 0, 0, h->mode.hdisplay, h->mode.vdisplay);
}

static void head_off(drmModeAtomicReq *req, struct head *h)
{
	add(req, h->crtc_id, DRM_MODE_OBJECT_CRTC, "MODE_ID", 0);
	add(req, h->crtc_id, DRM_MODE_OBJECT_CRTC, "ACTIVE", 0);
	add(req, h->conn_id, DRM_MODE_OBJECT_CONNECTOR, "CRTC_ID", 0);
}

/* Commit and free @req; 0 or -errno. */
static int commit(drmModeAtomicReq *req, uint32_t flags, void *data)
{
	int ret = drmModeAtomicCommit(fd, req, flags, data);

	ret = ret ? -errno : 0;
	drmModeAtomicFree(req);
	return ret;
}

static void expect(const char *name, int ret, int want)
{
	if (want)
		kms_result(ret != 0, "%s%s%s", name,
			   ret ? " # refused: " : ": accepted",
			   ret ? strerror(-ret) : "");
	else
		kms_result(ret == 0, "%s%s%s", name, ret ? ": " : "",
			   ret ? strerror(-ret) : "");
}

#define TEST_ONLY	DRM_MODE_ATOMIC_TEST_ONLY
#define MODESET		DRM_MODE_ATOMIC_ALLOW_MODESET

/* All planes off, every head off. */
static int all_off(void)
{
	drmModeAtomicReq *req = drmModeAtomicAlloc();
	int i;

	for (i = 0; i < num_planes; i++)
		plane_off(req, &planes[i]);
	for (i = 0; i < num_heads; i++)
		head_off(req, &heads[i]);
	return commit(req, MODESET, NULL);
}

static drmModeAtomicReq *all_on_request(void)
{
	drmModeAtomicReq *req = drmModeAtomicAlloc();
	int i;

	for (i = 0; i < num_heads; i++)
		head_on(req, &heads[i]);
	return req;
}

/* ------------------------------------------------------------------------ */
/* Discovery                                                                */
/* ------------------------------------------------------------------------ */

/* Plane @id of planes[], NULL if it has none. */
static struct plane *plane_of(uint32_t id)
{
	int i;

	for (i = 0; id && i < num_planes; i++)
		if (planes[i].id == id)
			return &planes[i];
	return NULL;
}

static void discover(void)
{
	drmModeRes *res;
	drmModePlaneRes *pres;
	uint32_t used = 0;
	int i;

	kms_resources(fd, &res, &pres);
	for (i = 0; i < (int)pres->count_planes && num_planes < MAX_PLANES; i++) {
		drmModePlane *p = drmModeGetPlane(fd, pres->planes[i]);
		struct plane *pl = &planes[num_planes];

		if (!p)
			continue;
		pl->id = p->plane_id;
		pl->possible_crtcs = p->possible_crtcs;
		kms_prop_value(fd, p->plane_id, DRM_MODE_OBJECT_PLANE, "type",
			       &pl->type);
		num_planes++;
		drmModeFreePlane(p);
	}

	for (i = 0; i < res->count_connectors && num_heads < MAX_HEADS; i++) {
		struct head *h = &heads[num_heads];
		struct kms_head k;

		if (!kms_head_find(fd, res, res->connectors[i], &used, &k))
			continue;
		h->pipe = k.pipe;
		h->conn_id = k.conn_id;
		h->crtc_id = k.crtc_id;
		h->mode = k.mode;
		h->primary = plane_of(k.primary);
		h->cursor = plane_of(k.cursor);
		if (!h->primary)
			continue;
		h->mode_blob = kms_mode_blob(fd, &h->mode);
		kms_mode_buffers(fd, h->buf, 2, &h->mode, h->pipe * 2);
		num_heads++;
	}
	drmModeFreePlaneResources(pres);
	drmModeFreeResources(res);
}

/* The n-th overlay plane that can go on every head. */
static struct plane *overlay(int n)
{
	int i;

	for (i = 0; i < num_planes; i++) {
		if (planes[i].type != DRM_PLANE_TYPE_OVERLAY)
			continue;
		if (n-- == 0)
			return &planes[i];
	}
	return NULL;
}

static int num_overlays(void)
{
	int i, n = 0;

	for (i = 0; i < num_planes; i++)
		n += planes[i].type == DRM_PLANE_TYPE_OVERLAY;
	return n;
}

/* ------------------------------------------------------------------------ */
/* Tests                                                                    */
/* ------------------------------------------------------------------------ */

static void test_modeset(void)
{
	drmModeAtomicReq *req;
	struct head *h = &heads[0];

	expect("all-heads-off", all_off(), 0);

	expect("modeset-without-allow-modeset-refused",
	       commit(all_on_request(), TEST_ONLY, NULL), 1);
	expect("modeset-all-heads-test-only",
	       commit(all_on_request(), TEST_ONLY | MODESET, NULL), 0);
	expect("modeset-all-heads", commit(all_on_request(), MODESET, NULL), 0);

	req = drmModeAtomicAlloc();
	h->front ^= 1;
	add(req, h->primary->id, DRM_MODE_OBJECT_PLANE, "FB_ID",
	    h->buf[h->front].fb_id);
	expect("primary-flip-without-allow-modeset", commit(req, 0, NULL), 0);
}

static void test_mode_change(void)
{
	drmModeConnector *c = drmModeGetConnector(fd, heads[0].conn_id);
	struct head *h = &heads[0];
	drmModeModeInfo *other = NULL;
	drmModeAtomicReq *req;
	uint32_t blob;
	int i;

	for (i = 0; c && i < c->count_modes; i++) {
		if (c->modes[i].hdisplay < h->mode.hdisplay &&
		    c->modes[i].vdisplay < h->mode.vdisplay) {
			other = &c->modes[i];
			break;
		}
	}
	if (!other || drmModeCreatePropertyBlob(fd, other, sizeof(*other),
						&blob)) {
		printf("ok mode-change # skip: no smaller mode\n");
		drmModeFreeConnector(c);
		return;
	}

	req = drmModeAtomicAlloc();
	add(req, h->crtc_id, DRM_MODE_OBJECT_CRTC, "MODE_ID", blob);
	plane_set(req, h->primary, h, &h->buf[h->front], other->hdisplay,
		  other->vdisplay, 0, 0, other->hdisplay, other->vdisplay);
	expect("mode-change-without-allow-modeset-refused",
	       commit(req, TEST_ONLY, NULL), 1);

	req = drmModeAtomicAlloc();
	add(req, h->crtc_id, DRM_MODE_OBJECT_CRTC, "MODE_ID", blob);
	plane_set(req, h->primary, h, &h->buf[h->front], other->hdisplay,
		  other->vdisplay, 0, 0, other->hdisplay, other->vdisplay);
	expect("mode-change-with-allow-modeset",
	       commit(req, TEST_ONLY | MODESET, NULL), 0);

	drmModeDestroyPropertyBlob(fd, blob);
	drmModeFreeConnector(c);
}

/* @count overlays spread over the heads, scaled 2x or not. */
static drmModeAtomicReq *overlays_request(struct kms_buffer *buf, int count,
					  bool scaled)
{
	drmModeAtomicReq *req = drmModeAtomicAlloc();
	uint32_t f = scaled ? 2 : 1;
	int i;

	for (i = 0; i < count; i++) {
		struct head *h = &heads[i % num_heads];

		plane_set(req, overlay(i), h, buf, SMALL_W, SMALL_H,
			  40 * (i / num_heads), 40 * (i / num_heads),
			  SMALL_W * f, SMALL_H * f);
	}
	return req;
}

static void test_scalers(int scalers)
{
	struct kms_buffer small;

	if (num_overlays() < scalers + 1 ||
	    (scalers + 1 + num_heads - 1) / num_heads > 3) {
		printf("ok scalers # skip %d overlays for %d scalers\n",
		       num_overlays(), scalers);
		return;
	}
	if (kms_buffer_create(fd, &small, SMALL_W, SMALL_H,
			      DRM_FORMAT_XRGB8888)) {
		kms_result(false, "scalers: buffer: %s", strerror(errno));
		return;
	}
	kms_buffer_fill(&small, 3);

	expect("scaled-overlays-within-scaler-pool",
	       commit(overlays_request(&small, scalers, true), TEST_ONLY,
		      NULL), 0);
	expect("scaled-overlays-over-scaler-pool-refused",
	       commit(overlays_request(&small, scalers + 1, true),
		      TEST_ONLY | MODESET, NULL), 1);
	expect("unscaled-overlays-need-no-scaler",
	       commit(overlays_request(&small, scalers + 1, false), TEST_ONLY,
		      NULL), 0);
	/* Really scan them out, then take one scaler more on another head. */
	expect("scaled-overlays-committed",
	       commit(overlays_request(&small, scalers, true), 0, NULL), 0);
	expect("one-more-scaled-overlay-refused",
	       commit(overlays_request(&small, scalers + 1, true), TEST_ONLY,
		      NULL), 1);

	{
		drmModeAtomicReq *req = drmModeAtomicAlloc();
		int i;

		for (i = 0; i < scalers; i++)
			plane_off(req, overlay(i));
		expect("scaled-overlays-off", commit(req, 0, NULL), 0);
	}
	kms_buffer_destroy(fd, &small);
}

/* Head 0 with its primary and @count unscaled 1920x1080 overlays. */
static drmModeAtomicReq *big_overlays_request(struct kms_buffer *big,
					      int count)
{
	drmModeAtomicReq *req = drmModeAtomicAlloc();
	int i;

	for (i = 0; i < count; i++)
		plane_set(req, overlay(i), &heads[0], big, BIG_W, BIG_H,
			  i * 8, i * 8, BIG_W, BIG_H);
	return req;
}

static void test_bandwidth(unsigned int head_kib)
{
	uint64_t primary = (uint64_t)heads[0].mode.hdisplay *
			   heads[0].mode.vdisplay * 4;
	uint64_t big_bytes = (uint64_t)BIG_W * BIG_H * 4;
	struct kms_buffer big;
	drmModeAtomicReq *req;
	int ret;

	/*
	 * head_kib per head: primary + 2 big overlays fit, + 3 do not,
	 * unless the heads are enabled again and split the device's
	 * bandwidth by what they need.
	 */
	if (!head_kib) {
		printf("ok bandwidth # skip no -b HEAD_KIB\n");
		return;
	}
	if (num_heads < 2 || num_overlays() < 3 ||
	    primary + 2 * big_bytes > head_kib * 1024ull ||
	    primary + 3 * big_bytes <= head_kib * 1024ull) {
		printf("ok bandwidth # skip topology\n");
		return;
	}
	if (kms_buffer_create(fd, &big, BIG_W, BIG_H, DRM_FORMAT_XRGB8888)) {
		kms_result(false, "bandwidth: buffer: %s", strerror(errno));
		return;
	}
	kms_buffer_fill(&big, 5);

	expect("bandwidth-within-allocation",
	       commit(big_overlays_request(&big, 2), TEST_ONLY, NULL), 0);
	expect("bandwidth-new-split-without-allow-modeset-refused",
	       commit(big_overlays_request(&big, 3), TEST_ONLY, NULL), 1);
	/* A plane update never turns into a modeset of any head. */
	expect("bandwidth-plane-update-never-modesets-refused",
	       commit(big_overlays_request(&big, 3), TEST_ONLY | MODESET,
		      NULL), 1);
	/* Heads enabled together split the bandwidth by what they need. */
	expect("bandwidth-heads-off", all_off(), 0);
	req = all_on_request();
	{
		int i;

		for (i = 0; i < 3; i++)
			plane_set(req, overlay(i), &heads[0], &big, BIG_W, BIG_H,
				  i * 8, i * 8, BIG_W, BIG_H);
	}
	ret = commit(req, MODESET, NULL);
	expect("bandwidth-new-split-by-enabling-the-heads", ret, 0);
	if (!ret) {
		int i;

		req = drmModeAtomicAlloc();
		for (i = 0; i < 3; i++)
			plane_off(req, overlay(i));
		expect("bandwidth-overlays-off", commit(req, 0, NULL), 0);
	}
	kms_buffer_destroy(fd, &big);

	/* Two 4096x1600 overlays: more than two heads have in all. */
	if (num_heads != 2 || 2ull * 4096 * 1600 * 4 <= 2ull * head_kib * 1024) {
		printf("ok bandwidth-over-device-total # skip topology\n");
		return;
	}
	if (kms_buffer_create(fd, &big, 4096, 1600, DRM_FORMAT_XRGB8888)) {
		kms_result(false, "bandwidth: buffer: %s", strerror(errno));
		return;
	}
	req = drmModeAtomicAlloc();
	plane_set(req, overlay(0), &heads[0], &big, 4096, 1600, 0, 0, 4096,
		  1600);
	plane_set(req, overlay(1), &heads[0], &big, 4096, 1600, 8, 8, 4096,
		  1600);
	expect("bandwidth-over-device-total-refused",
	       commit(req, TEST_ONLY | MODESET, NULL), 1);
	kms_buffer_destroy(fd, &big);
}

static void test_plane_move(void)
{
	struct plane *p = overlay(0);
	struct kms_buffer small;
	drmModeAtomicReq *req;

	if (num_heads < 2 || !p) {
		printf("ok plane-move # skip one head\n");
		return;
	}
	if (kms_buffer_create(fd, &small, SMALL_W, SMALL_H,
			      DRM_FORMAT_XRGB8888)) {
		kms_result(false, "plane-move: buffer: %s", strerror(errno));
		return;
	}
	kms_buffer_fill(&small, 1);

	req = drmModeAtomicAlloc();
	plane_set(req, p, &heads[0], &small, SMALL_W, SMALL_H, 16, 16,
		  SMALL_W, SMALL_H);
	expect("overlay-on-head-0", commit(req, 0, NULL), 0);

	req = drmModeAtomicAlloc();
	plane_set(req, p, &heads[1], &small, SMALL_W, SMALL_H, 16, 16,
		  SMALL_W, SMALL_H);
	expect("overlay-move-while-enabled-refused",
	       commit(req, TEST_ONLY | MODESET, NULL), 1);

	req = drmModeAtomicAlloc();
	plane_off(req, p);
	expect("overlay-off-head-0", commit(req, 0, NULL), 0);

	req = drmModeAtomicAlloc();
	plane_set(req, p, &heads[1], &small, SMALL_W, SMALL_H, 16, 16,
		  SMALL_W, SMALL_H);
	expect("overlay-on-head-1-after-disable", commit(req, 0, NULL), 0);

	req = drmModeAtomicAlloc();
	plane_off(req, p);
	expect("overlay-off-head-1", commit(req, 0, NULL), 0);

	kms_buffer_destroy(fd, &small);
}

static void test_cursor(void)
{
	struct head *h = &heads[0];
	struct kms_buffer cur, huge;
	drmModeAtomicReq *req;

	if (!h->cursor) {
		kms_result(false, "cursor-plane-visible-with-hotspot-cap");
		return;
	}
	kms_result(kms_prop_id(fd, h->cursor->id, DRM_MODE_OBJECT_PLANE,
			       "HOTSPOT_X") &&
		   kms_prop_id(fd, h->cursor->id, DRM_MODE_OBJECT_PLANE,
			       "HOTSPOT_Y"), "cursor-hotspot-properties");
	if (kms_buffer_create(fd, &cur, CURSOR_W, CURSOR_W,
			      DRM_FORMAT_ARGB8888) ||
	    kms_buffer_create(fd, &huge, CURSOR_MAX + 64, CURSOR_MAX + 64,
			      DRM_FORMAT_ARGB8888)) {
		kms_result(false, "cursor: buffer: %s", strerror(errno));
		return;
	}
	kms_buffer_fill(&cur, 2);

	req = drmModeAtomicAlloc();
	plane_set(req, h->cursor, h, &cur, CURSOR_W, CURSOR_W, 100, 100,
		  CURSOR_W, CURSOR_W);
	add(req, h->cursor->id, DRM_MODE_OBJECT_PLANE, "HOTSPOT_X", 3);
	add(req, h->cursor->id, DRM_MODE_OBJECT_PLANE, "HOTSPOT_Y", 5);
	expect("cursor-64x64-with-hotspot", commit(req, 0, NULL), 0);

	req = drmModeAtomicAlloc();
	plane_set(req, h->cursor, h, &cur, CURSOR_W, CURSOR_W, -20, -20,
		  CURSOR_W, CURSOR_W);
	expect("cursor-partly-off-screen", commit(req, 0, NULL), 0);

	req = drmModeAtomicAlloc();
	plane_set(req, h->cursor, h, &huge, CURSOR_MAX + 64, CURSOR_MAX + 64,
		  0, 0, CURSOR_MAX + 64, CURSOR_MAX + 64);
	expect("cursor-over-max-size-refused", commit(req, TEST_ONLY, NULL),
	       1);

	req = drmModeAtomicAlloc();
	plane_set(req, h->cursor, h, &cur, CURSOR_W, CURSOR_W, 0, 0,
		  CURSOR_W * 2, CURSOR_W * 2);
	expect("cursor-scaled-refused", commit(req, TEST_ONLY, NULL), 1);

	req = drmModeAtomicAlloc();
	plane_off(req, h->cursor);
	expect("cursor-off", commit(req, 0, NULL), 0);

	kms_buffer_destroy(fd, &cur);
	kms_buffer_destroy(fd, &huge);
}

static void flip_handler(int fd_, unsigned int seq, unsigned int sec,
			 unsigned int usec, unsigned int crtc_id, void *data)
{
	struct head *h = data;
	double t = sec + usec / 1e6;

	(void)fd_;
	if (h->crtc_id != crtc_id)
		h->order_ok = false;
	if (h->events && (seq <= h->last_seq || t < h->last_time))
		h->order_ok = false;
	/*
	 * CLOCK_MONOTONIC, at the vblank that completed the flip: after the
	 * commit, before now.  (How long after is the host's load, not the
	 * driver's.)  2 ms: the device's clock is mapped to the kernel's.
	 */
	if (t > kms_now() + 0.002 || t < h->queued - 0.002) {
		if (h->time_ok)
			printf("# head %d: event %u seq %u at %.6f, now %.6f\n",
			       h->pipe, h->events, seq, t, kms_now());
		h->time_ok = false;
	}
	h->last_seq = seq;
	h->last_time = t;
	h->events++;
	h->pending = false;
}

static void test_flips(int flips)
{
	drmEventContext ev = {
		.version = 3,
		.page_flip_handler2 = flip_handler,
	};
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	/* Against a hang, not a measure: 60 flips take a second. */
	double start = kms_now(), deadline = start + 30 + flips / 10.0;
	unsigned int submitted[MAX_HEADS] = { 0 };
	bool done = false;
	int i;

	for (i = 0; i < num_heads; i++) {
		heads[i].events = 0;
		heads[i].order_ok = true;
		heads[i].time_ok = true;
		heads[i].pending = false;
	}

	while (!done && kms_now() < deadline) {
		done = true;
		for (i = 0; i < num_heads; i++) {
			struct head *h = &heads[i];
			drmModeAtomicReq *req;
			int ret;

			if (h->events < (unsigned int)flips)
				done = false;
			if (h->pending || submitted[i] >= (unsigned int)flips)
				continue;
			req = drmModeAtomicAlloc();
			h->front ^= 1;
			add(req, h->primary->id, DRM_MODE_OBJECT_PLANE, "FB_ID",
			    h->buf[h->front].fb_id);
			h->queued = kms_now();
			ret = commit(req, DRM_MODE_ATOMIC_NONBLOCK |
				     DRM_MODE_PAGE_FLIP_EVENT, h);
			if (ret) {
				kms_result(false, "nonblocking-flip-head-%d: %s",
					   h->pipe, strerror(-ret));
				return;
			}
			h->pending = true;
			submitted[i]++;
		}
		if (done)
			break;
		if (poll(&pfd, 1, 1000) > 0)
			drmHandleEvent(fd, &ev);
	}

	for (i = 0; i < num_heads; i++) {
		struct head *h = &heads[i];
		double fps = h->events / (kms_now() - start);
		bool ok = h->events == (unsigned int)flips && h->order_ok &&
			  h->time_ok;

		kms_result(ok, "nonblocking-flip-events-head-%d %s %u of %d, %.1f/s%s%s",
			   h->pipe, ok ? "#" : ":", h->events, flips, fps,
			   h->order_ok ? "" : ", out of order",
			   h->time_ok ? "" : ", bad timestamps");
	}
}

static void flip_request(struct head *h, drmModeAtomicReq *req)
{
	h->front ^= 1;
	add(req, h->primary->id, DRM_MODE_OBJECT_PLANE, "FB_ID",
	    h->buf[h->front].fb_id);
}

/*
 * A nonblocking commit on a head whose previous one has not completed is
 * refused with EBUSY rather than queued; a commit on another head is not
 * held up by it.
 */
#define BUSY_ATTEMPTS	10

static void test_busy(void)
{
	drmEventContext ev = {
		.version = 3,
		.page_flip_handler2 = flip_handler,
	};
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	struct head *h = &heads[0], *other = &heads[num_heads - 1];
	uint32_t flags = DRM_MODE_ATOMIC_NONBLOCK | DRM_MODE_PAGE_FLIP_EVENT;
	double deadline = kms_now() + 5;
	drmModeAtomicReq *req;
	int ret, i, attempt;
	const char *why;
	bool raced = false;

	for (i = 0; i < num_heads; i++)
		heads[i].pending = false;
	for (attempt = 1; attempt <= BUSY_ATTEMPTS; attempt++) {
		req = drmModeAtomicAlloc();
		flip_request(h, req);
		ret = commit(req, flags, h);
		if (ret) {
			expect("nonblocking-flip-before-overlap", ret, 0);
			return;
		}
		h->pending = true;

		req = drmModeAtomicAlloc();
		flip_request(h, req);
		ret = commit(req, DRM_MODE_ATOMIC_NONBLOCK, NULL);
		if (ret)
			break;
		/*
		 * Accepted.  That is right only if the first commit completed
		 * in between (a guest descheduled for a frame does that), and
		 * then its event is already queued: try again.  Otherwise the
		 * overlap was accepted, which is the failure.
		 */
		h->front ^= 1;
		raced = poll(&pfd, 1, 0) > 0;
		while (h->pending && kms_now() < deadline)
			if (poll(&pfd, 1, 1000) > 0)
				drmHandleEvent(fd, &ev);
		/* A blocking commit waits for the accepted one to finish. */
		req = drmModeAtomicAlloc();
		flip_request(h, req);
		commit(req, 0, NULL);
		if (!raced)
			break;
	}
	expect("nonblocking-flip-before-overlap", 0, 0);
	if (ret == -EBUSY)
		why = "";
	else if (ret)
		why = strerror(-ret);
	else if (raced)
		why = "the first commit always completed first";
	else
		why = "accepted while the first was pending";
	kms_result(ret == -EBUSY, "overlapping-nonblocking-commit-is-ebusy%s%s, attempt %d",
		   ret == -EBUSY ? " #" : ": ", why,
		   attempt > BUSY_ATTEMPTS ? BUSY_ATTEMPTS : attempt);

	if (other != h) {
		req = drmModeAtomicAlloc();
		flip_request(other, req);
		ret = commit(req, flags, other);
		expect("nonblocking-flip-on-other-head-meanwhile", ret, 0);
		other->pending = !ret;
	}

	while ((h->pending || other->pending) && kms_now() < deadline)
		if (poll(&pfd, 1, 1000) > 0)
			drmHandleEvent(fd, &ev);
	kms_result(!h->pending && !other->pending,
		   "overlap-events-arrive");
}

int main(int argc, char **argv)
{
	int scalers = 2, flips = 60, head_kib = 0;
	const struct kms_option opts[] = {
		{ 's', KMS_OPTION_INT, &scalers, "SCALERS" },
		{ 'f', KMS_OPTION_INT, &flips, "FLIPS" },
		{ 'b', KMS_OPTION_INT, &head_kib, "KIB" },
		{ 0 }
	};
	const char *path;

	path = kms_operand(argc, argv,
			   kms_options(argc, argv, 1, opts, "[DEVICE]"),
			   KMS_CARD);

	fd = kms_open_atomic(path);
	kms_result(!drmSetClientCap(fd, DRM_CLIENT_CAP_CURSOR_PLANE_HOTSPOT, 1),
		   "cursor-plane-hotspot-cap");
	discover();
	if (!num_heads) {
		printf("not ok no connected head\n");
		return 1;
	}
	printf("# %d heads, %d planes\n", num_heads, num_planes);

	test_modeset();
	test_mode_change();
	test_scalers(scalers);
	test_bandwidth(head_kib);
	test_plane_move();
	test_cursor();
	test_flips(flips);
	test_busy();
	expect("all-heads-off-at-exit", all_off(), 0);

	close(fd);
	return kms_failures ? 1 : 0;
}
