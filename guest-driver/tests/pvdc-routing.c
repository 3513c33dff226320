// SPDX-License-Identifier: GPL-2.0-or-later OR MIT
/*
 * pvdc-routing: connector routing (HS_CONNECTOR), on the first two
 * connectors and CRTCs of the device.  CRTC 0 shows colour B, CRTC 1
 * colour A, each a solid framebuffer:
 *
 *   encoders     Every connector's encoder can drive every CRTC; none of
 *                them is a clone of another (a CRTC drives one connector);
 *                each writeback encoder is a clone of all of them.
 *   two-on-one   TEST_ONLY with connectors 0 and 1 on CRTC 0 is refused
 *                with EINVAL; with connector 0 alone it is accepted.
 *   nonblocking  A nonblocking commit that moves connector 0 from CRTC 0
 *                (turned off) to CRTC 1 (off before), with events: each
 *                event comes once the device latched it (the active
 *                HS_CTRL and HS_CONNECTOR of the head read from BAR 0),
 *                CRTC 1's carries CRTC 1's vblank: its next vblanks
 *                follow at the period of CRTC 1's mode (30 Hz, not
 *                the preferred refresh CRTC 0 had).
 *   writeback    CRTC 1 driving connector 0 writes its frame back through
 *                its writeback connector: colour A in every pixel.
 *   writeback-only
 *                CRTC 1 on with its writeback connector alone drives a
 *                free connector for the device (its own, 1); CRTC 0 may
 *                not take connector 1 meanwhile (TEST_ONLY: EINVAL); once
 *                CRTC 1 is turned off (nonblocking), a nonblocking commit
 *                right after it that turns CRTC 0 on with it may, and the
 *                device takes both (the host checks it refused nothing).
 *
 *   hold-move    Not a test: from connector c on CRTC c, connector 0 on
 *                CRTC 1 (CRTC 0 and connector 1 off), then "# holding"
 *                until SIGTERM: the host's console 0 shows colour A,
 *                console 1 nothing (it showed A before).
 *   hold-swap    Not a test: from connector c on CRTC c, connectors 0 and
 *                1 swap CRTCs in one commit; holds (console 0 A, 1 B).
 *   hold-legacy  Not a test: a client of the legacy uAPI only, from
 *                connector c on CRTC c: drmModeSetCrtc() of CRTC 1 with
 *                connector 0 turns CRTC 0 off, connector 0's encoder is
 *                on CRTC 1; holds (console 0 A, console 1 nothing).
 *
 * Usage: pvdc-routing [-c DEVICE] [TEST...]; every test when none is
 * named (the hold-* ones only when named).  Reads BAR 0: boot with
 * iomem=relaxed.
 */
#include <signal.h>
#include <sys/ioctl.h>
#include <linux/sync_file.h>

#include "pvdc-kms-util.h"
#include "pvdc-regs.h"

#define TEST_ONLY	DRM_MODE_ATOMIC_TEST_ONLY
#define MODESET		DRM_MODE_ATOMIC_ALLOW_MODESET
#define NONBLOCK	DRM_MODE_ATOMIC_NONBLOCK
#define EVENT		DRM_MODE_PAGE_FLIP_EVENT
#define CRTC		DRM_MODE_OBJECT_CRTC
#define PLANE		DRM_MODE_OBJECT_PLANE
#define CONNECTOR	DRM_MODE_OBJECT_CONNECTOR

/* As tests/guest/test_routing.py expects them, 0xRRGGBB. */
#define COLOUR_A	0xc03060u	/* CRTC 1 */
#define COLOUR_B	0x40a0e0u	/* CRTC 0 */

#define NONE		-1

static int fd = -1;
static volatile uint32_t *bar0;
static uint32_t crtcs[2], primaries[2];
static uint32_t conns[2], encoders[2];	/* connectors 0 and 1 */
static uint32_t wb_conns[2], wb_encoders[2];	/* of CRTCs 0 and 1 */
static drmModeModeInfo modes[2];	/* of connectors 0 and 1 */
static struct kms_buffer fbs[2];	/* CRTC 0's (B) and CRTC 1's (A) */

/* ------------------------------------------------------------------------ */
/* Set-up                                                                   */
/* ------------------------------------------------------------------------ */

static void fill(struct kms_buffer *buf, uint32_t xrgb)
{
	uint32_t x, y;

	for (y = 0; y < buf->height; y++) {
		uint32_t *line = (uint32_t *)((uint8_t *)buf->map +
					      (size_t)y * buf->pitch);

		for (x = 0; x < buf->width; x++)
			line[x] = 0xff000000u | xrgb;
	}
}

/*
 * The first two CRTCs with a primary plane each, the first two connected
 * connectors with their encoders and preferred modes, and (with the cap)
 * the writeback connectors of the two CRTCs.  False if there are not two
 * (of each).
 */
static bool discover(bool legacy)
{
	drmModeRes *res = drmModeGetResources(fd);
	drmModePlaneRes *pres = drmModeGetPlaneResources(fd);
	unsigned int n = 0, i, k;

	if (!res || !pres || res->count_crtcs < 2)
		return false;
	for (k = 0; k < 2; k++)
		crtcs[k] = res->crtcs[k];
	for (i = 0; i < pres->count_planes; i++) {
		drmModePlane *p = drmModeGetPlane(fd, pres->planes[i]);
		uint64_t type = 0;

		if (!p)
			continue;
		kms_prop_value(fd, p->plane_id, PLANE, "type", &type);
		for (k = 0; k < 2; k++)
			if (type == DRM_PLANE_TYPE_PRIMARY && !primaries[k] &&
			    p->possible_crtcs & (1u << k)) {
				primaries[k] = p->plane_id;
				break;
			}
		drmModeFreePlane(p);
	}
	for (i = 0; i < (unsigned int)res->count_connectors; i++) {
		drmModeConnector *c = drmModeGetConnector(fd,
							  res->connectors[i]);
		drmModeEncoder *e;

		if (!c || !c->count_encoders) {
			drmModeFreeConnector(c);
			continue;
		}
		e = drmModeGetEncoder(fd, c->encoders[0]);
		if (c->connector_type == DRM_MODE_CONNECTOR_WRITEBACK) {
			for (k = 0; e && k < 2; k++)
				if (e->possible_crtcs == 1u << k) {
					wb_conns[k] = c->connector_id;
					wb_encoders[k] = e->encoder_id;
				}
		} else if (n < 2 && !kms_connector_mode(c, &modes[n])) {
			conns[n] = c->connector_id;
			encoders[n++] = c->encoders[0];
		}
		drmModeFreeEncoder(e);
		drmModeFreeConnector(c);
	}
	drmModeFreePlaneResources(pres);
	drmModeFreeResources(res);
	/* A legacy client sees no primary plane, and needs none. */
	return n == 2 && (legacy || (primaries[0] && primaries[1]));
}

/* Framebuffers of the size of connector 0's mode, which both show. */
static void buffers_create(void)
{
	unsigned int k;

	for (k = 0; k < 2; k++) {
		if (kms_buffer_create(fd, &fbs[k], modes[0].hdisplay,
				      modes[0].vdisplay, DRM_FORMAT_XRGB8888)) {
			printf("not ok buffers: %s\n", strerror(errno));
			exit(1);
		}
		fill(&fbs[k], k ? COLOUR_A : COLOUR_B);
	}
}

/* ------------------------------------------------------------------------ */
/* Requests                                                                 */
/* ------------------------------------------------------------------------ */

static void add(drmModeAtomicReq *req, uint32_t obj, uint32_t type,
		const char *name, uint64_t val)
{
	kms_add(fd, req, obj, type, name, val);
}

/*
 * CRTC @k on with @mode and its framebuffer full screen, or off (NULL);
 * its primary plane with it.
 */
static void crtc_set(drmModeAtomicReq *req, unsigned int k,
		     const drmModeModeInfo *mode)
{
	struct kms_buffer *fb = &fbs[k];

	add(req, crtcs[k], CRTC, "MODE_ID", mode ? kms_mode_blob(fd, mode) : 0);
	add(req, crtcs[k], CRTC, "ACTIVE", !!mode);
	add(req, primaries[k], PLANE, "FB_ID", mode ? fb->fb_id : 0);
	add(req, primaries[k], PLANE, "CRTC_ID", mode ? crtcs[k] : 0);
	if (!mode)
		return;
	add(req, primaries[k], PLANE, "SRC_X", 0);
	add(req, primaries[k], PLANE, "SRC_Y", 0);
	add(req, primaries[k], PLANE, "SRC_W", (uint64_t)fb->width << 16);
	add(req, primaries[k], PLANE, "SRC_H", (uint64_t)fb->height << 16);
	add(req, primaries[k], PLANE, "CRTC_X", 0);
	add(req, primaries[k], PLANE, "CRTC_Y", 0);
	add(req, primaries[k], PLANE, "CRTC_W", fb->width);
	add(req, primaries[k], PLANE, "CRTC_H", fb->height);
}

/*
 * CRTC 0 on with mode @m0, CRTC 1 with @m1 (NULL: off), connector 0 on
 * CRTC @conn0_crtc, connector 1 on @conn1_crtc (0: off).
 */
static drmModeAtomicReq *request(const drmModeModeInfo *m0,
				 const drmModeModeInfo *m1, uint32_t conn0_crtc,
				 uint32_t conn1_crtc)
{
	drmModeAtomicReq *req = drmModeAtomicAlloc();

	crtc_set(req, 0, m0);
	crtc_set(req, 1, m1);
	add(req, conns[0], CONNECTOR, "CRTC_ID", conn0_crtc);
	add(req, conns[1], CONNECTOR, "CRTC_ID", conn1_crtc);
	return req;
}

/*
 * CRTC k driving connector @route[k] (NONE: off) with that connector's
 * mode, and every connector not routed off.
 */
static drmModeAtomicReq *routes(const int route[2])
{
	const drmModeModeInfo *m[2];
	uint32_t on[2] = { 0, 0 };
	unsigned int k;

	for (k = 0; k < 2; k++) {
		m[k] = route[k] == NONE ? NULL : &modes[route[k]];
		if (route[k] != NONE)
			on[route[k]] = crtcs[k];
	}
	return request(m[0], m[1], on[0], on[1]);
}

static int commit(drmModeAtomicReq *req, uint32_t flags, void *data)
{
	int ret = drmModeAtomicCommit(fd, req, flags, data);

	ret = ret ? -errno : 0;
	drmModeAtomicFree(req);
	return ret;
}

/* Head @h of the device as it scans out now. */
static bool head_active(unsigned int h)
{
	return kms_reg(bar0, PVDC_HEAD_ACTIVE(h) + PVDC_HS_CTRL) &
	       PVDC_HS_CTRL_ENABLE;
}

static uint32_t head_connector(unsigned int h)
{
	return kms_reg(bar0, PVDC_HEAD_ACTIVE(h) + PVDC_HS_CONNECTOR);
}

/* ------------------------------------------------------------------------ */
/* encoders, two-on-one                                                     */
/* ------------------------------------------------------------------------ */

static void test_encoders(void)
{
	drmModeRes *res = drmModeGetResources(fd);
	uint32_t all = 0, masks[2] = { 0 }, clones[2] = { 0 };
	uint32_t wb_clones[2] = { 0 };
	/* possible_clones is a mask of encoder indices. */
	uint32_t bits[2] = { 0 }, wb_bits[2] = { 0 };
	bool wb_ok = true;
	unsigned int k;
	int i;

	for (i = 0; res && i < res->count_crtcs; i++)
		all |= 1u << i;
	for (i = 0; res && i < res->count_encoders; i++) {
		drmModeEncoder *e = drmModeGetEncoder(fd, res->encoders[i]);

		for (k = 0; e && k < 2; k++) {
			if (e->encoder_id == encoders[k]) {
				bits[k] = 1u << i;
				masks[k] = e->possible_crtcs;
				clones[k] = e->possible_clones;
			}
			if (e->encoder_id == wb_encoders[k]) {
				wb_bits[k] = 1u << i;
				wb_clones[k] = e->possible_clones;
			}
		}
		drmModeFreeEncoder(e);
	}
	drmModeFreeResources(res);

	kms_result(masks[0] == all && masks[1] == all,
		   "every-connector-encoder-can-drive-every-crtc # possible_crtcs %#x %#x, crtcs %#x",
		   masks[0], masks[1], all);
	kms_result(!(clones[0] & bits[1]) && !(clones[1] & bits[0]),
		   "connector-encoders-are-not-clones-of-each-other # possible_clones %#x %#x",
		   clones[0], clones[1]);
	if (!wb_encoders[0] || !wb_encoders[1]) {
		printf("ok writeback-encoders-clone-every-connector-encoder # skip no writeback connectors\n");
		return;
	}
	for (k = 0; k < 2; k++)
		wb_ok &= (wb_clones[k] & (bits[0] | bits[1])) ==
			 (bits[0] | bits[1]) &&
			 (clones[k] & (wb_bits[0] | wb_bits[1])) ==
			 (wb_bits[0] | wb_bits[1]) &&
			 !(wb_clones[k] & wb_bits[!k]);
	kms_result(wb_ok,
		   "writeback-encoders-clone-every-connector-encoder # writeback %#x %#x, connectors %#x %#x",
		   wb_clones[0], wb_clones[1], clones[0], clones[1]);
}

static void test_two_on_one(void)
{
	drmModeAtomicReq *req;
	int ret;

	req = routes((const int[2]){ 0, NONE });
	ret = commit(req, TEST_ONLY | MODESET, NULL);
	kms_result(!ret, "test-only-one-connector-on-crtc-0-accepted # %s",
		   strerror(-ret));

	req = request(&modes[0], NULL, crtcs[0], crtcs[0]);
	ret = commit(req, TEST_ONLY | MODESET, NULL);
	kms_result(ret == -EINVAL,
		   "test-only-two-connectors-on-one-crtc-einval # %s",
		   strerror(-ret));
}

/* ------------------------------------------------------------------------ */
/* nonblocking                                                              */
/* ------------------------------------------------------------------------ */

struct route_events {
	unsigned int seen;		/* mask of CRTC indices */
	unsigned int seq[2];
	uint64_t ns[2];
	bool latched[2];		/* the device showed it at the event */
	uint32_t connector;		/* head 1's HS_CONNECTOR then */
};

static void route_event(int efd, unsigned int seq, unsigned int sec,
			unsigned int usec, unsigned int crtc, void *data)
{
	struct route_events *ev = data;
	unsigned int k;

	(void)efd;
	for (k = 0; k < 2; k++) {
		if (crtc != crtcs[k])
			continue;
		ev->seen |= 1u << k;
		ev->seq[k] = seq;
		ev->ns[k] = (uint64_t)sec * 1000000000ull + usec * 1000ull;
		/* CRTC 0 turned off, CRTC 1 on with connector 0. */
		ev->latched[k] = k ? head_active(1) && head_connector(1) == 0 :
				 !head_active(0);
		if (k)
			ev->connector = head_connector(1);
	}
}

static bool wait_events(struct route_events *ev, unsigned int mask)
{
	drmEventContext ctx = {
		.version = 3,
		.page_flip_handler2 = route_event,
	};
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	while ((ev->seen & mask) != mask && poll(&pfd, 1, 10000) > 0)
		drmHandleEvent(fd, &ctx);
	return (ev->seen & mask) == mask;
}

/* The next vblank of CRTC @pipe: its count and time. */
static bool next_vblank(unsigned int pipe, unsigned int *seq, uint64_t *ns)
{
	drmVBlank vbl = { 0 };

	vbl.request.type = DRM_VBLANK_RELATIVE |
			   ((pipe << DRM_VBLANK_HIGH_CRTC_SHIFT) &
			    DRM_VBLANK_HIGH_CRTC_MASK);
	vbl.request.sequence = 1;
	if (drmWaitVBlank(fd, &vbl))
		return false;
	*seq = vbl.reply.sequence;
	*ns = (uint64_t)vbl.reply.tval_sec * 1000000000ull +
	      vbl.reply.tval_usec * 1000ull;
	return true;
}

static void test_nonblocking(void)
{
	drmModeModeInfo slow = kms_mode_at_hz(&modes[0], 30);
	struct route_events ev = { 0 };
	uint64_t period = kms_mode_period_ns(&slow), ns, want, err;
	drmModeAtomicReq *req;
	unsigned int seq;
	int ret;

	/*
	 * CRTC 1 off: nothing else of the commit orders its enable after
	 * CRTC 0's disable, which releases connector 0.
	 */
	ret = commit(routes((const int[2]){ 0, NONE }), MODESET, NULL);
	if (ret) {
		kms_result(false, "nonblocking-setup: %s", strerror(-ret));
		return;
	}
	/* CRTC 1 at 30 Hz: its vblanks cannot pass for another CRTC's. */
	req = request(NULL, &slow, crtcs[1], 0);
	ret = commit(req, NONBLOCK | MODESET | EVENT, &ev);
	if (ret || !wait_events(&ev, 3)) {
		kms_result(false, "nonblocking-route-change: %s, events %#x",
			   strerror(-ret), ev.seen);
		return;
	}
	kms_result(ev.latched[0],
		   "nonblocking-crtc-0-event-after-its-disable-latched");
	kms_result(ev.latched[1],
		   "nonblocking-crtc-1-event-after-the-route-latched # HS_CONNECTOR %u",
		   ev.connector);

	if (!next_vblank(1, &seq, &ns)) {
		kms_result(false, "nonblocking-event-is-crtc-1-vblank: %s",
			   strerror(errno));
		return;
	}
	want = (uint64_t)(seq - ev.seq[1]) * period;
	err = ns - ev.ns[1] > want ? ns - ev.ns[1] - want :
	      want - (ns - ev.ns[1]);
	/* Microsecond timestamps, and the clock mapping's error. */
	kms_result(seq > ev.seq[1] && err < 500000,
		   "nonblocking-event-is-crtc-1-vblank # event %u at %llu, vblank %u at %llu, period %llu",
		   ev.seq[1], (unsigned long long)ev.ns[1], seq,
		   (unsigned long long)ns, (unsigned long long)period);
}

/* ------------------------------------------------------------------------ */
/* writeback                                                                */
/* ------------------------------------------------------------------------ */

/* Commit @req (freed) with a writeback job into @buf on CRTC @k's. */
static int writeback_commit(drmModeAtomicReq *req, unsigned int k,
			    struct kms_buffer *buf, uint32_t flags)
{
	struct pollfd pfd = { .events = POLLIN };
	struct sync_file_info info = { 0 };
	int32_t fence = -1;
	int ret;

	add(req, wb_conns[k], CONNECTOR, "CRTC_ID", crtcs[k]);
	add(req, wb_conns[k], CONNECTOR, "WRITEBACK_FB_ID", buf->fb_id);
	add(req, wb_conns[k], CONNECTOR, "WRITEBACK_OUT_FENCE_PTR",
	    (uint64_t)(uintptr_t)&fence);
	ret = commit(req, flags, NULL);
	if (ret)
		return ret;
	if (fence < 0)
		return -ENOENT;
	pfd.fd = fence;
	ret = poll(&pfd, 1, 10000) == 1 ? 0 : -ETIMEDOUT;
	if (!ret && ioctl(fence, SYNC_IOC_FILE_INFO, &info))
		ret = -errno;
	if (!ret && info.status != 1)
		ret = info.status < 0 ? info.status : -EIO;
	close(fence);
	return ret;
}

static void writeback_detach(void)
{
	drmModeAtomicReq *req = drmModeAtomicAlloc();
	unsigned int k;

	for (k = 0; k < 2; k++)
		add(req, wb_conns[k], CONNECTOR, "CRTC_ID", 0);
	commit(req, MODESET, NULL);
}

static void test_writeback(void)
{
	struct kms_buffer target;
	uint64_t wrong = 0;
	uint32_t x, y;
	int ret;

	if (!wb_conns[1]) {
		printf("ok writeback-of-crtc-1-driving-connector-0 # skip no writeback connector\n");
		return;
	}
	if (kms_buffer_create(fd, &target, modes[0].hdisplay,
			      modes[0].vdisplay, DRM_FORMAT_XRGB8888)) {
		kms_result(false, "writeback-target: %s", strerror(errno));
		return;
	}
	fill(&target, 0x5a17e1);
	ret = writeback_commit(routes((const int[2]){ NONE, 0 }), 1, &target,
			       MODESET);
	for (y = 0; !ret && y < target.height; y++)
		for (x = 0; x < target.width; x++) {
			uint32_t px = ((uint32_t *)((uint8_t *)target.map +
				       (size_t)y * target.pitch))[x];

			wrong += (px & 0xffffff) != COLOUR_A;
		}
	kms_result(!ret && !wrong,
		   "writeback-of-crtc-1-driving-connector-0 # %s, %llu pixels not colour A",
		   strerror(-ret), (unsigned long long)wrong);
	writeback_detach();
	kms_buffer_destroy(fd, &target);
}

static void test_writeback_only(void)
{
	struct route_events ev = { 0 };
	struct kms_buffer target;
	drmModeAtomicReq *req;
	int ret;

	if (!wb_conns[1]) {
		printf("ok writeback-only-crtc-drives-a-free-connector # skip no writeback connector\n");
		return;
	}
	if (kms_buffer_create(fd, &target, modes[0].hdisplay,
			      modes[0].vdisplay, DRM_FORMAT_XRGB8888)) {
		kms_result(false, "writeback-only-target: %s", strerror(errno));
		return;
	}
	/*
	 * CRTC 1 on with its writeback connector only, CRTC 0 and the
	 * connectors off.
	 */
	req = request(NULL, &modes[0], 0, 0);
	ret = writeback_commit(req, 1, &target, MODESET);
	kms_result(!ret && head_active(1) && head_connector(1) == 1,
		   "writeback-only-crtc-drives-a-free-connector # %s, head 1 %s, HS_CONNECTOR %u",
		   strerror(-ret), head_active(1) ? "on" : "off",
		   head_connector(1));

	/* Connector 1 on CRTC 0, CRTC 1 left as it is. */
	req = drmModeAtomicAlloc();
	crtc_set(req, 0, &modes[1]);
	add(req, conns[1], CONNECTOR, "CRTC_ID", crtcs[0]);
	ret = commit(req, TEST_ONLY | MODESET, NULL);
	kms_result(ret == -EINVAL,
		   "test-only-connector-of-a-writeback-only-crtc-einval # %s",
		   strerror(-ret));

	/*
	 * Released by one nonblocking commit, taken by the next, right
	 * away: CRTC 0 is off, its enable would latch at once if nothing
	 * made it wait for CRTC 1's disable.
	 */
	req = drmModeAtomicAlloc();
	crtc_set(req, 1, NULL);
	add(req, wb_conns[1], CONNECTOR, "CRTC_ID", 0);
	ret = commit(req, NONBLOCK | MODESET | EVENT, &ev);
	if (!ret) {
		req = drmModeAtomicAlloc();
		crtc_set(req, 0, &modes[1]);
		add(req, conns[1], CONNECTOR, "CRTC_ID", crtcs[0]);
		ret = commit(req, NONBLOCK | MODESET | EVENT, &ev);
	}
	kms_result(!ret && wait_events(&ev, 3) && head_active(0) &&
		   head_connector(0) == 1,
		   "connector-released-by-a-writeback-only-crtc-taken-by-the-next-commit # %s, HS_CONNECTOR %u",
		   strerror(-ret), head_connector(0));
	kms_buffer_destroy(fd, &target);
}

/* ------------------------------------------------------------------------ */
/* hold-*                                                                   */
/* ------------------------------------------------------------------------ */

static void hold(void)
{
	sigset_t set;
	int sig;

	printf("# holding\n");
	fflush(stdout);
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigwait(&set, &sig);
}

static void hold_move(void)
{
	/* Console 1 shows colour A first: then nothing. */
	int ret = commit(routes((const int[2]){ 0, 1 }), MODESET, NULL);

	kms_result(!ret, "move-setup-connector-c-on-crtc-c # %s",
		   strerror(-ret));
	ret = commit(routes((const int[2]){ NONE, 0 }), MODESET, NULL);
	kms_result(!ret && !head_active(0) && head_active(1) &&
		   head_connector(1) == 0,
		   "move-connector-0-to-crtc-1 # %s, HS_CONNECTOR %u",
		   strerror(-ret), head_connector(1));
	hold();
}

static void hold_swap(void)
{
	int ret = commit(routes((const int[2]){ 0, 1 }), MODESET, NULL);

	kms_result(!ret, "swap-setup-connector-c-on-crtc-c # %s",
		   strerror(-ret));
	ret = commit(routes((const int[2]){ 1, 0 }), MODESET, NULL);
	kms_result(!ret && head_connector(0) == 1 && head_connector(1) == 0,
		   "swap-connectors-in-one-commit # %s, HS_CONNECTOR %u %u",
		   strerror(-ret), head_connector(0), head_connector(1));
	hold();
}

/* A client of the legacy uAPI alone: no atomic cap, SETCRTC. */
static void hold_legacy(void)
{
	drmModeCrtc *crtc;
	drmModeConnector *conn;
	drmModeEncoder *enc = NULL;
	int ret;

	ret = drmModeSetCrtc(fd, crtcs[0], fbs[0].fb_id, 0, 0, &conns[0], 1,
			     &modes[0]);
	if (!ret)
		ret = drmModeSetCrtc(fd, crtcs[1], fbs[1].fb_id, 0, 0,
				     &conns[1], 1, &modes[1]);
	kms_result(!ret, "legacy-setup-connector-c-on-crtc-c # %s",
		   strerror(errno));
	ret = drmModeSetCrtc(fd, crtcs[1], fbs[1].fb_id, 0, 0, &conns[0], 1,
			     &modes[0]);
	kms_result(!ret, "legacy-setcrtc-takes-connector-0-to-crtc-1 # %s",
		   ret ? strerror(errno) : "");

	crtc = drmModeGetCrtc(fd, crtcs[0]);
	kms_result(crtc && !crtc->mode_valid,
		   "legacy-setcrtc-turns-off-the-crtc-it-took-the-connector-from # mode_valid %d",
		   crtc ? crtc->mode_valid : -1);
	drmModeFreeCrtc(crtc);
	conn = drmModeGetConnector(fd, conns[0]);
	if (conn && conn->encoder_id)
		enc = drmModeGetEncoder(fd, conn->encoder_id);
	kms_result(enc && enc->crtc_id == crtcs[1],
		   "legacy-connector-0-encoder-on-crtc-1 # encoder %u on CRTC %u",
		   conn ? conn->encoder_id : 0, enc ? enc->crtc_id : 0);
	drmModeFreeEncoder(enc);
	drmModeFreeConnector(conn);
	crtc = drmModeGetCrtc(fd, crtcs[1]);
	kms_result(crtc && crtc->mode_valid && crtc->buffer_id == fbs[1].fb_id,
		   "legacy-crtc-1-shows-its-framebuffer");
	drmModeFreeCrtc(crtc);
	kms_result(!head_active(0) && head_active(1) && head_connector(1) == 0,
		   "legacy-device-head-1-drives-connector-0 # HS_CONNECTOR %u",
		   head_connector(1));
	hold();
}

/* ------------------------------------------------------------------------ */

static bool wanted(int argc, char **argv, const char *name)
{
	/* The hold-* ones only when named, like "hold". */
	if (!strncmp(name, "hold", 4) && optind >= argc)
		return false;
	return kms_wanted(argc, argv, optind, name);
}

int main(int argc, char **argv)
{
	static const char *const tests[] = {
		"encoders", "two-on-one", "nonblocking", "writeback",
		"writeback-only", "hold-move", "hold-swap", "hold-legacy",
	};
	const char *card = KMS_CARD;
	const struct kms_option opts[] = {
		{ 'c', KMS_OPTION_STRING, &card, "CARD" },
		{ 0 }
	};
	sigset_t set;
	unsigned int i;
	bool legacy;

	kms_options(argc, argv, 1, opts, "TEST...");
	/* Signals for hold(), blocked before any thread could take them. */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigprocmask(SIG_BLOCK, &set, NULL);

	legacy = wanted(argc, argv, "hold-legacy");
	fd = legacy ? kms_open(card) : kms_open_atomic(card);
	if (!legacy)
		drmSetClientCap(fd, DRM_CLIENT_CAP_WRITEBACK_CONNECTORS, 1);
	bar0 = kms_bar_map(card, 0, NULL);
	if (!discover(legacy)) {
		for (i = 0; i < sizeof(tests) / sizeof(tests[0]); i++)
			if (wanted(argc, argv, tests[i]))
				printf("ok %s # skip fewer than two heads\n",
				       tests[i]);
		return 0;
	}
	buffers_create();

	if (legacy) {
		hold_legacy();
		return kms_failures ? 1 : 0;
	}
	if (wanted(argc, argv, "encoders"))
		test_encoders();
	if (wanted(argc, argv, "two-on-one"))
		test_two_on_one();
	if (wanted(argc, argv, "nonblocking"))
		test_nonblocking();
	if (wanted(argc, argv, "writeback"))
		test_writeback();
	if (wanted(argc, argv, "writeback-only"))
		test_writeback_only();
	if (wanted(argc, argv, "hold-move"))
		hold_move();
	if (wanted(argc, argv, "hold-swap"))
		hold_swap();

	close(fd);
	return kms_failures ? 1 : 0;
}
