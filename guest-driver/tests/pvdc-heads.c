// SPDX-License-Identifier: GPL-2.0-or-later OR MIT
/*
 * pvdc-heads: heads commit independently.
 *
 *   pvdc-heads [-d CARD] [-t SECONDS] [-r HZ] [-s HZ1] TEST...
 *
 *   Head 0 runs at HZ (its mode's timings, default 30 Hz: room for a
 *   loaded host), head 1 at HZ1 (default 2 Hz): each of head 1's commits
 *   then waits up to half a second for its vblank, which a driver that
 *   serialises the heads makes head 0 wait too.
 *   modesets      head 0 flips on every vblank (nonblocking page flips,
 *                 the next one issued from each event) while head 1 does
 *                 back-to-back blocking modesets, between two modes: each
 *                 of head 0's flips latches at the first vblank after it
 *                 was issued (a host that stalls the guest for longer
 *                 than a frame may make one in fifty late; the frames
 *                 missed are reported), and no interval between two of
 *                 them comes near a link-up delay.
 *   overlays      the same while head 1 switches a scaled overlay on and
 *                 off on every frame.
 *   scaler-moves  the scalers go from head to head: nonblocking commits,
 *                 issued back to back without waiting, alternately give a
 *                 scaled overlay up on one head and take one on the other,
 *                 in two commits and in one.  With a pool of one scaler,
 *                 each take needs the release before it: every commit is
 *                 accepted, and the host checks that the device refused
 *                 none (x-commits-rejected).
 *   plane-moves   an overlay, disabled and bound to the slow head 1 (it
 *                 was shown there last), is shown on head 0 while a page
 *                 flip of head 1 waits for its vblank: the device counts
 *                 the overlay in every commit of the head it is bound to,
 *                 so the driver must bind it to head 0 and let head 1's
 *                 commit latch first.  Every commit is accepted, and the
 *                 host checks that the device refused none
 *                 (x-commits-rejected).
 */
#include "pvdc-kms-util.h"

static struct kms_display disp;
static double seconds = 8;
static unsigned int hz = 30, hz1 = 2;

/* Head 0's flips (kms_flipper), while head 1 works. */
static struct kms_flipper run;

static int light_all(void)
{
	drmModeAtomicReq *req = drmModeAtomicAlloc();
	unsigned int i;

	for (i = 0; i < disp.num_heads; i++) {
		disp.heads[i].mode = kms_mode_at_hz(&disp.heads[i].mode,
						    i ? hz1 : hz);
		kms_head_on(&disp, req, &disp.heads[i], NULL);
	}
	return kms_commit(&disp, req, DRM_MODE_ATOMIC_ALLOW_MODESET, NULL);
}

/* Another mode of @h's connector than its preferred one, if any. */
static bool other_mode(struct kms_head *h, drmModeModeInfo *mode)
{
	drmModeConnector *c = drmModeGetConnector(disp.fd, h->conn_id);
	bool found = false;
	int i;

	for (i = 0; c && i < c->count_modes && !found; i++) {
		if (c->modes[i].hdisplay < h->mode.hdisplay &&
		    c->modes[i].vdisplay < h->mode.vdisplay) {
			*mode = kms_mode_at_hz(&c->modes[i], hz1);
			found = true;
		}
	}
	drmModeFreeConnector(c);
	return found;
}

/* Run @work on head 1 while head 0 flips; report head 0's pacing. */
static void with_head0_flipping(const char *name,
				unsigned int (*work)(uint64_t end))
{
	unsigned int done;
	uint64_t end;

	kms_flipper_start(&run, &disp, &disp.heads[0]);
	end = kms_now_ns() + (uint64_t)(seconds * 1e9);
	done = work(end);
	kms_flipper_stop(&run);

	printf("# head 0: %u flips over %u frames, %u missed, %u latched later than the vblank after they were issued, longest interval %.1f ms (ioctl %.1f ms, to the event %.1f ms); head 1: %u %s\n",
	       run.flips, kms_flipper_frames(&run), run.missed, run.late,
	       run.longest_ns / 1e6, run.longest_ioctl_ns / 1e6,
	       run.longest_wait_ns / 1e6, done, name);
	kms_result(kms_flipper_paced(&run),
		   "head-0-flips-every-frame-during-head-1-%s # %u flips, %u late, %u frames missed",
		   name, run.flips, run.late, run.missed);
	/* Waiting for head 1 would take a frame of it, or its link-up. */
	kms_result(run.longest_ns < 400000000ull,
		   "head-0-never-waits-for-head-1-%s # longest interval %.1f ms",
		   name, run.longest_ns / 1e6);
	kms_result(done >= 2, "head-1-%s-done # %u", name, done);
}

static unsigned int head1_modesets(uint64_t end)
{
	struct kms_head *h = &disp.heads[1];
	drmModeModeInfo other;
	unsigned int count = 0;

	if (!other_mode(h, &other))
		return 0;
	while ((uint64_t)kms_now_ns() < end && !run.errors) {
		drmModeAtomicReq *req = drmModeAtomicAlloc();

		kms_head_on(&disp, req, h, count % 2 ? &h->mode : &other);
		if (kms_commit(&disp, req, DRM_MODE_ATOMIC_ALLOW_MODESET, NULL))
			break;
		count++;
	}
	return count;
}

/*
 * Removing a framebuffer that is shown turns its plane off with a commit
 * that locks every head: created before head 0 flips, removed after.
 */
static struct kms_buffer small;

static unsigned int head1_overlays(uint64_t end)
{
	struct kms_head *h = &disp.heads[1];
	uint32_t overlay = kms_overlay(&disp, 0);
	unsigned int count = 0;

	if (!overlay)
		return 0;
	while (((uint64_t)kms_now_ns() < end || count % 2) && !run.errors) {
		drmModeAtomicReq *req = drmModeAtomicAlloc();

		if (count % 2)
			kms_plane_off(&disp, req, overlay);
		else
			kms_plane_set(&disp, req, overlay, h, &small, 32, 32,
				      640, 360);
		if (kms_commit(&disp, req, 0, NULL))
			break;
		count++;
	}
	return count;
}

/* ------------------------------------------------------------------------ */
/* scaler-moves                                                             */
/* ------------------------------------------------------------------------ */

static unsigned int pending, commits;

static void commit_event(int fd, unsigned int seq, unsigned int sec,
			 unsigned int usec, unsigned int crtc, void *data)
{
	(void)fd;
	(void)seq;
	(void)sec;
	(void)usec;
	(void)crtc;
	(void)data;
	pending--;
}

static bool wait_events(void)
{
	drmEventContext ev = { .version = 3, .page_flip_handler2 = commit_event };
	struct pollfd pfd = { .fd = disp.fd, .events = POLLIN };

	while (pending) {
		if (poll(&pfd, 1, 5000) <= 0)
			return false;
		drmHandleEvent(disp.fd, &ev);
	}
	return true;
}

/* Nonblocking, one event per head it changes; counts refusals. */
static int async_commit(drmModeAtomicReq *req, unsigned int heads,
			unsigned int *refused)
{
	int ret = kms_commit(&disp, req, DRM_MODE_ATOMIC_NONBLOCK |
			     DRM_MODE_PAGE_FLIP_EVENT, NULL);

	commits++;
	if (ret) {
		printf("# commit %u refused: %s\n", commits, strerror(-ret));
		(*refused)++;
	} else {
		pending += heads;
	}
	return ret;
}

static void scaled(drmModeAtomicReq *req, uint32_t plane, struct kms_head *h,
		   struct kms_buffer *buf, bool on)
{
	if (on)
		kms_plane_set(&disp, req, plane, h, buf, 16, 16, 480, 270);
	else
		kms_plane_off(&disp, req, plane);
}

static void test_scaler_moves(void)
{
	uint32_t ov[2] = { kms_overlay(&disp, 0), kms_overlay(&disp, 1) };
	struct kms_head *h[2] = { &disp.heads[0], &disp.heads[1] };
	unsigned int moves = 0, refused = 0, i;
	drmModeAtomicReq *req;
	uint64_t end;

	if (!ov[0] || !ov[1]) {
		kms_result(false, "scaler-moves: set-up");
		return;
	}
	/* Head 1 starts with the scaler. */
	req = drmModeAtomicAlloc();
	scaled(req, ov[1], h[1], &small, true);
	if (kms_commit(&disp, req, 0, NULL)) {
		kms_result(false, "scaler-moves: first overlay: %s",
			   strerror(errno));
		return;
	}

	end = kms_now_ns() + (uint64_t)(seconds * 1e9);
	for (i = 0; (uint64_t)kms_now_ns() < end; i++) {
		/* Head 1 has the scaler when i is even. */
		unsigned int from = !(i % 2), to = !from;

		if (i % 3 == 2) {
			/* Give up and take in one commit. */
			req = drmModeAtomicAlloc();
			scaled(req, ov[from], h[from], &small, false);
			scaled(req, ov[to], h[to], &small, true);
			async_commit(req, 2, &refused);
		} else {
			/* Give up, then take at once: two commits. */
			req = drmModeAtomicAlloc();
			scaled(req, ov[from], h[from], &small, false);
			async_commit(req, 1, &refused);
			req = drmModeAtomicAlloc();
			scaled(req, ov[to], h[to], &small, true);
			async_commit(req, 1, &refused);
		}
		if (!wait_events()) {
			kms_result(false, "scaler-moves: events missing");
			return;
		}
		moves++;
	}
	printf("# %u scaler moves between heads, %u commits refused\n", moves,
	       refused);
	kms_result(moves >= 10 && !refused,
		   "scaler-moves-between-heads-accepted # %u moves", moves);

	req = drmModeAtomicAlloc();
	scaled(req, ov[0], h[0], &small, false);
	scaled(req, ov[1], h[1], &small, false);
	kms_commit(&disp, req, 0, NULL);
}

/* Blocking; counts refusals. */
static void sync_commit(drmModeAtomicReq *req, unsigned int *refused)
{
	int ret = kms_commit(&disp, req, 0, NULL);

	commits++;
	if (ret) {
		printf("# commit %u refused: %s\n", commits, strerror(-ret));
		(*refused)++;
	}
}

static void test_plane_moves(void)
{
	struct kms_head *h0 = &disp.heads[0], *h1 = &disp.heads[1];
	uint32_t ov = kms_overlay(&disp, 0);
	unsigned int moves = 0, refused = 0, i;
	drmModeAtomicReq *req;
	uint64_t end;

	if (!ov) {
		kms_result(false, "plane-moves: set-up");
		return;
	}
	end = kms_now_ns() + (uint64_t)(seconds * 1e9);
	for (i = 0; (uint64_t)kms_now_ns() < end; i++) {
		/* Bound to head 1: shown there, then disabled. */
		req = drmModeAtomicAlloc();
		kms_plane_set(&disp, req, ov, h1, &small, 16, 16, small.width,
			      small.height);
		sync_commit(req, &refused);
		req = drmModeAtomicAlloc();
		kms_plane_off(&disp, req, ov);
		sync_commit(req, &refused);

		/* Head 1 flips: up to a frame of it to its latch... */
		if (drmModePageFlip(disp.fd, h1->crtc_id,
				    h1->buf[(i + 1) % 2].fb_id,
				    DRM_MODE_PAGE_FLIP_EVENT, NULL)) {
			printf("# page flip of head 1 refused: %s\n",
			       strerror(errno));
			refused++;
		} else {
			pending++;
		}
		/* ...while the overlay goes on at head 0. */
		req = drmModeAtomicAlloc();
		kms_plane_set(&disp, req, ov, h0, &small, 16, 16, small.width,
			      small.height);
		sync_commit(req, &refused);
		if (!wait_events()) {
			kms_result(false, "plane-moves: events missing");
			return;
		}
		req = drmModeAtomicAlloc();
		kms_plane_off(&disp, req, ov);
		sync_commit(req, &refused);
		moves++;
	}
	printf("# %u overlay moves from head 1 to head 0, %u commits refused\n",
	       moves, refused);
	kms_result(moves >= 2 && !refused,
		   "overlay-moves-while-its-old-head-flips-accepted # %u moves",
		   moves);
}

int main(int argc, char **argv)
{
	const char *card = KMS_CARD;
	const struct kms_option opts[] = {
		{ 'd', KMS_OPTION_STRING, &card, "CARD" },
		{ 't', KMS_OPTION_DOUBLE, &seconds, "SECONDS" },
		{ 'r', KMS_OPTION_UINT, &hz, "HZ" },
		{ 's', KMS_OPTION_UINT, &hz1, "HZ1" },
		{ 0 }
	};
	int first, i;

	first = kms_options(argc, argv, 1, opts, "TEST...");
	kms_display_open(&disp, card);
	if (kms_buffer_create(disp.fd, &small, 320, 180, DRM_FORMAT_XRGB8888)) {
		printf("not ok buffer: %s\n", strerror(errno));
		return 1;
	}
	kms_buffer_fill(&small, 3);
	if (disp.num_heads < 2) {
		printf("not ok two heads needed, %u found\n", disp.num_heads);
		return 1;
	}
	if (light_all()) {
		printf("not ok light the heads: %s\n", strerror(errno));
		return 1;
	}
	for (i = first; i < argc; i++) {
		if (!strcmp(argv[i], "modesets"))
			with_head0_flipping("modesets", head1_modesets);
		else if (!strcmp(argv[i], "overlays"))
			with_head0_flipping("overlays", head1_overlays);
		else if (!strcmp(argv[i], "scaler-moves"))
			test_scaler_moves();
		else if (!strcmp(argv[i], "plane-moves"))
			test_plane_moves();
		else
			kms_result(false, "unknown test %s", argv[i]);
	}
	return kms_failures ? 1 : 0;
}
