// SPDX-License-Identifier: GPL-2.0-or-later OR MIT
/*
 * pvdc-modeset: light up every connected head through the legacy KMS uAPI.
 *
 * For each connected connector: its preferred mode on its CRTC with a dumb
 * buffer of colour bars (SETCRTC), a vblank wait, and a few legacy page
 * flips whose events must arrive while a legacy cursor moves.  The pattern then stays on screen for
 * SECONDS (until SIGINT/SIGTERM when 0).
 *
 * Usage: pvdc-modeset [SECONDS [DEVICE]]; SECONDS 0 means until killed,
 * no SECONDS means exit right after the checks.
 */
#include <poll.h>
#include <signal.h>

#include "pvdc-kms-util.h"

#define MAX_HEADS	8
#define FLIPS		10
#define CURSOR_SIZE	64

struct head {
	uint32_t crtc_id, conn_id;
	int pipe;
	drmModeModeInfo mode;
	struct kms_buffer buf[2];
	unsigned int front;
	unsigned int events;
	bool pending;
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void flip_handler(int fd, unsigned int seq, unsigned int sec,
			 unsigned int usec, void *data)
{
	struct head *h = data;

	(void)fd; (void)seq; (void)sec; (void)usec;
	h->events++;
	h->pending = false;
}

static int pick_crtc(int fd, drmModeRes *res, drmModeConnector *conn,
		     uint32_t used)
{
	int i, j;

	for (i = 0; i < conn->count_encoders; i++) {
		drmModeEncoder *enc = drmModeGetEncoder(fd, conn->encoders[i]);

		if (!enc)
			continue;
		for (j = 0; j < res->count_crtcs; j++) {
			if ((enc->possible_crtcs & (1u << j)) &&
			    !(used & (1u << j))) {
				drmModeFreeEncoder(enc);
				return j;
			}
		}
		drmModeFreeEncoder(enc);
	}
	return -1;
}

static bool wait_flips(int fd, struct head *heads, int n, int timeout_ms)
{
	drmEventContext ev = {
		.version = 2,
		.page_flip_handler = flip_handler,
	};
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	int i;

	for (;;) {
		bool pending = false;

		for (i = 0; i < n; i++)
			pending |= heads[i].pending;
		if (!pending)
			return true;
		if (poll(&pfd, 1, timeout_ms) <= 0)
			return false;
		drmHandleEvent(fd, &ev);
	}
}

/*
 * Each connected connector's preferred mode on a CRTC of its own, showing
 * colour bars (SETCRTC); returns how many heads are lit, -1 on failure.
 */
static int light_heads(int fd, drmModeRes *res, struct head *heads)
{
	uint32_t used = 0;
	int i, n = 0, f;

	for (i = 0; i < res->count_connectors && n < MAX_HEADS; i++) {
		drmModeConnector *conn = drmModeGetConnector(fd,
							     res->connectors[i]);
		struct head *h = &heads[n];
		int pipe, ret;

		if (!conn)
			continue;
		if (kms_connector_mode(conn, &h->mode)) {
			drmModeFreeConnector(conn);
			continue;
		}
		pipe = pick_crtc(fd, res, conn, used);
		if (pipe < 0) {
			kms_result(false, "crtc-for-connector-%u", conn->connector_id);
			drmModeFreeConnector(conn);
			continue;
		}
		used |= 1u << pipe;
		h->pipe = pipe;
		h->crtc_id = res->crtcs[pipe];
		h->conn_id = conn->connector_id;
		drmModeFreeConnector(conn);

		for (f = 0; f < 2; f++) {
			ret = kms_buffer_create(fd, &h->buf[f], h->mode.hdisplay,
						h->mode.vdisplay,
						DRM_FORMAT_XRGB8888);
			if (ret) {
				kms_result(false, "buffer-head-%d: %s", pipe,
					   strerror(-ret));
				return -1;
			}
			kms_buffer_fill(&h->buf[f], pipe + f * 4);
		}
		ret = drmModeSetCrtc(fd, h->crtc_id, h->buf[0].fb_id, 0, 0,
				     &h->conn_id, 1, &h->mode);
		kms_result(!ret, "modeset-head-%d %s %s", pipe,
			   ret ? ":" : "#", h->mode.name);
		if (ret)
			continue;
		n++;
	}
	if (!n)
		kms_result(false, "no connected head");
	return n;
}

/*
 * FLIPS legacy page flips on every head, each waiting for the events of
 * the last, while a legacy cursor (no hotspot client cap) moves; returns
 * false when a flip could not be queued.
 */
static bool flip_with_cursor(int fd, struct head *heads, int n)
{
	struct kms_buffer cursor = { 0 };
	bool cursor_ok;
	int i, f;

	cursor_ok = n && !kms_buffer_create(fd, &cursor, CURSOR_SIZE,
					    CURSOR_SIZE, DRM_FORMAT_ARGB8888);
	if (cursor_ok) {
		kms_buffer_fill(&cursor, 1);
		for (i = 0; i < n; i++)
			cursor_ok &= !drmModeSetCursor2(fd, heads[i].crtc_id,
							cursor.handle,
							CURSOR_SIZE,
							CURSOR_SIZE, 4, 4);
	}

	for (f = 0; f < FLIPS; f++) {
		for (i = 0; i < n; i++) {
			struct head *h = &heads[i];

			if (cursor_ok)
				cursor_ok &= !drmModeMoveCursor(fd, h->crtc_id,
								16 * f, 8 * f);
			h->front ^= 1;
			if (drmModePageFlip(fd, h->crtc_id,
					    h->buf[h->front].fb_id,
					    DRM_MODE_PAGE_FLIP_EVENT, h)) {
				kms_result(false, "page-flip-head-%d: %s",
					   h->pipe, strerror(errno));
				return false;
			}
			h->pending = true;
		}
		/* The kernel itself gives up on a flip after 10 s. */
		if (!wait_flips(fd, heads, n, 10000))
			break;
	}
	for (i = 0; cursor_ok && i < n; i++)
		cursor_ok &= !drmModeSetCursor(fd, heads[i].crtc_id, 0, 0, 0);
	kms_result(cursor_ok, "cursor-moves-during-flips");
	for (i = 0; i < n; i++)
		kms_result(heads[i].events == FLIPS,
			   "page-flip-events-head-%d %s %u of %d", heads[i].pipe,
			   heads[i].events == FLIPS ? "#" : ":",
			   heads[i].events, FLIPS);
	if (cursor.handle)
		kms_buffer_destroy(fd, &cursor);
	return true;
}

/* Keep the picture for @seconds, or until SIGINT/SIGTERM when 0. */
static void hold(int n, int seconds)
{
	double end = kms_now() + seconds;

	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	/* Tells a waiting harness that every head shows its pattern. */
	printf("# holding the picture on %d heads\n", n);
	fflush(stdout);
	while (!stop && (!seconds || kms_now() < end))
		usleep(100000);
}

int main(int argc, char **argv)
{
	int seconds = argc > 1 ? atoi(argv[1]) : -1;
	const char *path = kms_operand(argc, argv, 2, KMS_CARD);
	struct head heads[MAX_HEADS];
	drmModeRes *res;
	int fd, i, n;

	memset(heads, 0, sizeof(heads));
	fd = kms_open(path);
	res = drmModeGetResources(fd);
	if (!res) {
		printf("not ok resources: %s\n", strerror(errno));
		return 1;
	}

	n = light_heads(fd, res, heads);
	if (n < 0)
		return 1;
	for (i = 0; i < n; i++) {
		drmVBlank vbl = { 0 };

		vbl.request.type = DRM_VBLANK_RELATIVE |
			(heads[i].pipe << DRM_VBLANK_HIGH_CRTC_SHIFT);
		vbl.request.sequence = 2;
		kms_result(!drmWaitVBlank(fd, &vbl), "vblank-wait-head-%d",
			   heads[i].pipe);
	}
	if (!flip_with_cursor(fd, heads, n))
		return 1;
	if (seconds >= 0)
		hold(n, seconds);

	for (i = 0; i < n; i++) {
		kms_buffer_destroy(fd, &heads[i].buf[0]);
		kms_buffer_destroy(fd, &heads[i].buf[1]);
	}
	drmModeFreeResources(res);
	close(fd);
	return kms_failures ? 1 : 0;
}
