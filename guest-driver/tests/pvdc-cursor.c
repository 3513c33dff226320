// SPDX-License-Identifier: GPL-2.0-or-later OR MIT
/*
 * pvdc-cursor: legacy cursor updates never wait for a vblank.
 *
 *   pvdc-cursor [-d CARD] [-H HEAD] [-t SECONDS] [-r HZ] [-m MOVES] TEST...
 *
 *   moves   the head at HZ (default 30): one thread flips it on every
 *           vblank (nonblocking page flips, the next one issued from each
 *           event) while another moves the legacy cursor MOVES times per
 *           frame period (default 20; 0: as fast as it can), changing its
 *           image every 32 moves: each flip
 *           latches at the first vblank after it was issued (a host that
 *           stalls the guest for longer than a frame may make one in
 *           fifty late; the frames missed are reported), and the cursor
 *           moves more than twice per frame: a cursor move that waited
 *           for a vblank would make one per frame (how many more it makes
 *           is the host's speed, for bench/, not a test).
 *   pinned  on a 2 Hz mode, the cursor's image is replaced and its old
 *           buffer destroyed at once, then a buffer of the same size is
 *           bound for an overlay: as long as the device still shows the
 *           old image (its active FB_OFFSET, read through BAR0), the
 *           device address stays bound (the driver's debugfs
 *           pvdc_bindings), and the new buffer never takes its place.
 *           Needs the guest booted with iomem=relaxed.
 *   legacy  overlays fill the head's bandwidth as far as the driver lets
 *           them, then a full-size legacy cursor (SETCURSOR) and a legacy
 *           SETPLANE that needs more than the head has: each is applied
 *           or refused with EINVAL, and no head goes through a modeset (a
 *           head turned off and on again, here with the device's link-up
 *           delay, misses frames: every head's vblank counter must have
 *           advanced by exactly the frames its timestamps span).
 */
#include "pvdc-kms-util.h"
#include "pvdc-regs.h"

/* The size of kms_cursor_image()'s images. */
#define CURSOR_SIZE	KMS_CURSOR_SIZE

static struct kms_display disp;
static struct kms_head *head;
static double seconds = 5;
static unsigned int hz = 30, moves_per_frame = 20;

static int light(const drmModeModeInfo *mode)
{
	drmModeAtomicReq *req = drmModeAtomicAlloc();

	kms_head_on(&disp, req, head, mode);
	return kms_commit(&disp, req, DRM_MODE_ATOMIC_ALLOW_MODESET, NULL);
}

/* ------------------------------------------------------------------------ */
/* moves                                                                    */
/* ------------------------------------------------------------------------ */

static struct kms_flipper flipper;

/* The cursor mover's counts. */
static struct {
	volatile bool stop;
	unsigned int moves, move_errors;
} run;

/* Paced by the clock, not by the vblanks. */
static void *mover(void *arg)
{
	struct kms_buffer *images = arg;
	uint64_t step = moves_per_frame ?
			kms_mode_period_ns(&head->mode) / moves_per_frame : 0;
	struct timespec next;
	unsigned int i = 0;
	uint32_t x, y;

	clock_gettime(CLOCK_MONOTONIC, &next);
	while (!run.stop) {
		next.tv_nsec += step;
		while (next.tv_nsec >= 1000000000) {
			next.tv_nsec -= 1000000000;
			next.tv_sec++;
		}
		if (step)
			clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next,
					NULL);
		kms_cursor_place(head, i, &x, &y);
		int ret = drmModeMoveCursor(disp.fd, head->crtc_id, x, y);

		if (!ret && i % 32 == 31)
			ret = kms_cursor_set(disp.fd, head,
					     &images[(i / 32) % 2]);
		if (ret)
			run.move_errors++;
		else
			run.moves++;
		i++;
	}
	return NULL;
}

static void test_moves(void)
{
	struct kms_buffer images[2];
	pthread_t move_thread;
	uint64_t end;
	double frames, per_frame;

	kms_cursor_images(disp.fd, images);
	if (kms_cursor_set(disp.fd, head, &images[0])) {
		kms_result(false, "moves: set cursor: %s", strerror(errno));
		kms_cursor_images_off(disp.fd, head, images);
		return;
	}
	kms_flipper_start(&flipper, &disp, head);
	pthread_create(&move_thread, NULL, mover, images);
	end = kms_now_ns() + (uint64_t)(seconds * 1e9);
	while ((uint64_t)kms_now_ns() < end && !flipper.errors)
		usleep(100000);
	run.stop = true;
	pthread_join(move_thread, NULL);
	kms_flipper_stop(&flipper);

	frames = kms_flipper_frames(&flipper);
	per_frame = frames > 0 ? run.moves / frames : 0;
	printf("# %u flips over %.0f frames, %u missed, %u latched later than the vblank after they were issued; %u cursor moves (%u refused), %.1f per frame\n",
	       flipper.flips, frames, flipper.missed, flipper.late, run.moves,
	       run.move_errors, per_frame);
	kms_result(kms_flipper_paced(&flipper),
		   "flips-land-on-the-next-vblank-during-cursor-moves # %u flips, %u late, %u frames missed",
		   flipper.flips, flipper.late, flipper.missed);
	kms_result(!run.move_errors && per_frame > 2,
		   "cursor-moves-do-not-wait-for-vblank # %.1f per frame",
		   per_frame);
	kms_cursor_images_off(disp.fd, head, images);
}

/* ------------------------------------------------------------------------ */
/* pinned                                                                   */
/* ------------------------------------------------------------------------ */

static volatile uint32_t *bar0;

/* The device plane number of the head's cursor: the last of its planes. */
static unsigned int cursor_index(void)
{
	unsigned int per_head = kms_reg(bar0, PVDC_REG_NUM_PLANES) /
				kms_reg(bar0, PVDC_REG_NUM_HEADS);

	return head->pipe * per_head + per_head - 1;
}

static uint32_t active_cursor_offset(void)
{
	return kms_reg(bar0, PVDC_PLANE_ACTIVE(cursor_index()) +
		       PVDC_PS_FB_OFFSET);
}

/* The start of the driver's binding holding device address @offset, or 0. */
static uint64_t binding_of(uint32_t offset)
{
	FILE *f = fopen("/sys/kernel/debug/dri/0/pvdc_bindings", "r");
	unsigned long long start, size, found = 0;
	unsigned int use;

	if (!f)
		return 0;
	while (fscanf(f, "%llx %llx %u", &start, &size, &use) == 3)
		if (offset >= start && offset - start < size)
			found = start;
	fclose(f);
	return found;
}

/* A plane other than the cursor whose shadow FB_OFFSET is @offset. */
static bool other_plane_at(uint32_t offset)
{
	unsigned int p, n = kms_reg(bar0, PVDC_REG_NUM_PLANES);

	for (p = 0; p < n; p++)
		if (p != cursor_index() &&
		    kms_reg(bar0, PVDC_PLANE_SHADOW(p) + PVDC_PS_CTRL) &&
		    kms_reg(bar0, PVDC_PLANE_SHADOW(p) + PVDC_PS_FB_OFFSET) ==
		    offset)
			return true;
	return false;
}

static void test_pinned(void)
{
	drmModeModeInfo slow = head->mode;
	struct kms_buffer a, b, c;
	drmModeAtomicReq *req;
	drmVBlank vbl = { 0 };
	uint32_t offset_a, overlay = kms_overlay(&disp, 0);
	uint64_t binding_a;
	unsigned int checks = 0, wrong = 0;
	int ret;

	bar0 = kms_bar_map(disp.card, PVDC_MMIO_BAR, NULL);
	slow.clock = (uint32_t)((uint64_t)slow.htotal * slow.vtotal / 500);
	slow.vrefresh = 2;
	if (!overlay || light(&slow)) {
		kms_result(false, "pinned: set-up: %s", strerror(errno));
		return;
	}
	kms_cursor_image(disp.fd, &a, 0xffff0000);
	kms_cursor_image(disp.fd, &b, 0xff00ff00);
	kms_cursor_image(disp.fd, &c, 0xff0000ff);

	/* A on screen: its offset is where the device reads the cursor. */
	kms_cursor_set(disp.fd, head, &a);
	vbl.request.type = DRM_VBLANK_RELATIVE |
			   ((head->pipe << DRM_VBLANK_HIGH_CRTC_SHIFT) &
			    DRM_VBLANK_HIGH_CRTC_MASK);
	vbl.request.sequence = 2;
	drmWaitVBlank(disp.fd, &vbl);
	offset_a = active_cursor_offset();
	binding_a = binding_of(offset_a);
	if (!binding_a) {
		kms_result(false, "pinned: cursor A not on screen (offset %#x)",
			   offset_a);
		return;
	}

	/* Right after a vblank: half a second until the next latch. */
	vbl.request.sequence = 1;
	drmWaitVBlank(disp.fd, &vbl);
	ret = kms_cursor_set(disp.fd, head, &b);
	kms_buffer_destroy(disp.fd, &a);
	/* A buffer of A's size, pinned now: A's place if A was let go. */
	req = drmModeAtomicAlloc();
	kms_plane_set(&disp, req, overlay, head, &c, 100, 100, CURSOR_SIZE,
		      CURSOR_SIZE);
	ret = ret ?: kms_commit(&disp, req, DRM_MODE_ATOMIC_NONBLOCK, NULL);
	while (!ret && active_cursor_offset() == offset_a && checks < 100000) {
		/* Unbound while the device, read after, still shows it. */
		if (binding_of(offset_a) != binding_a &&
		    active_cursor_offset() == offset_a)
			wrong++;
		checks++;
	}
	/* C's commit is written by now: bound in A's place, A went early. */
	vbl.request.type = DRM_VBLANK_RELATIVE |
			   ((head->pipe << DRM_VBLANK_HIGH_CRTC_SHIFT) &
			    DRM_VBLANK_HIGH_CRTC_MASK);
	vbl.request.sequence = 1;
	drmWaitVBlank(disp.fd, &vbl);
	if (!ret && other_plane_at(binding_a))
		wrong++;
	printf("# %u reads of the old cursor while the device showed it, %u changed\n",
	       checks, wrong);
	kms_result(!ret && checks && !wrong,
		   "old-cursor-stays-bound-until-the-device-latched-the-new-one%s%s",
		   ret ? ": " : "", ret ? strerror(-ret) : "");

	req = drmModeAtomicAlloc();
	kms_plane_off(&disp, req, overlay);
	kms_commit(&disp, req, 0, NULL);
	drmModeSetCursor(disp.fd, head->crtc_id, 0, 0, 0);
	kms_buffer_destroy(disp.fd, &b);
	kms_buffer_destroy(disp.fd, &c);
	light(NULL);
}

/* ------------------------------------------------------------------------ */
/* legacy                                                                   */
/* ------------------------------------------------------------------------ */

struct frame_mark {
	uint64_t seq, ns, period;
	bool on;
};

/* The last vblank of every head: its counter and timestamp. */
static void mark_heads(struct frame_mark *m)
{
	unsigned int i;

	for (i = 0; i < disp.num_heads; i++) {
		drmModeCrtc *crtc = drmModeGetCrtc(disp.fd,
						   disp.heads[i].crtc_id);

		m[i].on = crtc && crtc->mode_valid;
		m[i].period = m[i].on ? kms_mode_period_ns(&crtc->mode) : 0;
		drmModeFreeCrtc(crtc);
		if (drmCrtcGetSequence(disp.fd, disp.heads[i].crtc_id,
				       &m[i].seq, &m[i].ns))
			m[i].seq = m[i].ns = 0;
	}
}

/* Heads whose counter did not follow their timestamps from @a to @b. */
static unsigned int heads_modeset(const struct frame_mark *a,
				  const struct frame_mark *b)
{
	unsigned int i, mask = 0;

	for (i = 0; i < disp.num_heads; i++) {
		uint64_t frames;

		if (!a[i].on || !b[i].on || !a[i].period) {
			mask |= a[i].on != b[i].on ? 1u << i : 0;
			continue;
		}
		frames = (b[i].ns - a[i].ns + a[i].period / 2) / a[i].period;
		printf("# head %u: %llu vblanks counted, %llu frames passed\n",
		       i, (unsigned long long)(b[i].seq - a[i].seq),
		       (unsigned long long)frames);
		if (b[i].seq - a[i].seq != frames)
			mask |= 1u << i;
	}
	return mask;
}

/* Overlay @ov shows @lines of @big, or is off. */
static void show_lines(drmModeAtomicReq *req, uint32_t ov,
		       struct kms_buffer *big, uint32_t lines)
{
	if (!lines) {
		kms_plane_off(&disp, req, ov);
		return;
	}
	kms_plane_set(&disp, req, ov, head, big, 0, 0, big->width, lines);
	kms_add(disp.fd, req, ov, DRM_MODE_OBJECT_PLANE, "SRC_H",
		(uint64_t)lines << 16);
}

/* Two overlays show @lines of @big between them, unscaled. */
static int fill(const uint32_t *ov, struct kms_buffer *big, uint32_t lines,
		uint32_t flags)
{
	drmModeAtomicReq *req = drmModeAtomicAlloc();

	show_lines(req, ov[0], big, lines < big->height ? lines : big->height);
	show_lines(req, ov[1], big, lines > big->height ?
		   lines - big->height : 0);
	return kms_commit(&disp, req, flags, NULL);
}

static void test_legacy(void)
{
	uint32_t ov[3] = { kms_overlay(&disp, 0), kms_overlay(&disp, 1),
			   kms_overlay(&disp, 2) };
	struct frame_mark before[KMS_MAX_HEADS], after[KMS_MAX_HEADS];
	uint64_t cursor_w = 64, cursor_h = 64, t;
	struct kms_buffer big, cursor;
	uint32_t lo = 0, hi, mid;
	drmVBlank vbl = { 0 };
	int cursor_ret, plane_ret;
	unsigned int modeset, i;
	drmModeAtomicReq *req;

	if (!ov[0] || !ov[1] || !ov[2] ||
	    kms_buffer_create(disp.fd, &big, 4096, 1024,
			      DRM_FORMAT_XRGB8888)) {
		kms_result(false, "legacy: set-up: %s", strerror(errno));
		return;
	}
	kms_buffer_fill(&big, 1);
	drmGetCap(disp.fd, DRM_CAP_CURSOR_WIDTH, &cursor_w);
	drmGetCap(disp.fd, DRM_CAP_CURSOR_HEIGHT, &cursor_h);
	if (kms_buffer_create(disp.fd, &cursor, cursor_w, cursor_h,
			      DRM_FORMAT_ARGB8888)) {
		kms_result(false, "legacy: cursor: %s", strerror(errno));
		return;
	}
	memset(cursor.map, 0xff, cursor.size);

	/* The most of the head's bandwidth a plane update may take. */
	hi = 2 * big.height + 1;
	while (hi - lo > 1) {
		mid = (lo + hi) / 2;
		if (fill(ov, &big, mid, DRM_MODE_ATOMIC_TEST_ONLY))
			hi = mid;
		else
			lo = mid;
	}
	if (!lo || hi > 2 * big.height || fill(ov, &big, lo, 0)) {
		kms_result(false, "legacy: fill the head: %u lines: %s", lo,
			   strerror(errno));
		return;
	}
	printf("# overlays take %u KiB on top of the primary\n",
	       lo * big.pitch / 1024);

	mark_heads(before);
	t = kms_now_ns();
	cursor_ret = drmModeSetCursor(disp.fd, head->crtc_id, cursor.handle,
				      cursor_w, cursor_h) ? -errno : 0;
	if (!cursor_ret)
		cursor_ret = drmModeMoveCursor(disp.fd, head->crtc_id, 10, 10) ?
			     -errno : 0;
	plane_ret = drmModeSetPlane(disp.fd, ov[2], head->crtc_id, big.fb_id,
				    0, 0, 0, big.width, big.height, 0, 0,
				    big.width << 16, big.height << 16) ?
		    -errno : 0;
	t = kms_now_ns() - t;
	vbl.request.type = DRM_VBLANK_RELATIVE |
			   ((head->pipe << DRM_VBLANK_HIGH_CRTC_SHIFT) &
			    DRM_VBLANK_HIGH_CRTC_MASK);
	vbl.request.sequence = 2;
	drmWaitVBlank(disp.fd, &vbl);
	mark_heads(after);
	modeset = heads_modeset(before, after);

	printf("# %llux%llu cursor: %s, SETPLANE: %s, %.1f ms\n",
	       (unsigned long long)cursor_w, (unsigned long long)cursor_h,
	       strerror(-cursor_ret), strerror(-plane_ret), t / 1e6);
	kms_result(cursor_ret == 0 || cursor_ret == -EINVAL,
		   "legacy-cursor-on-a-full-head-applied-or-refused # %s",
		   strerror(-cursor_ret));
	kms_result(plane_ret == -EINVAL,
		   "legacy-setplane-over-the-allocation-refused # %s",
		   strerror(-plane_ret));
	kms_result(!modeset,
		   "legacy-cursor-and-setplane-modeset-no-head # heads %#x",
		   modeset);

	drmModeSetCursor(disp.fd, head->crtc_id, 0, 0, 0);
	req = drmModeAtomicAlloc();
	for (i = 0; i < 3; i++)
		kms_plane_off(&disp, req, ov[i]);
	kms_commit(&disp, req, 0, NULL);
	kms_buffer_destroy(disp.fd, &cursor);
	kms_buffer_destroy(disp.fd, &big);
}

int main(int argc, char **argv)
{
	const char *card = KMS_CARD;
	unsigned int head_index = 0;
	const struct kms_option opts[] = {
		{ 'd', KMS_OPTION_STRING, &card, "CARD" },
		{ 'H', KMS_OPTION_UINT, &head_index, "HEAD" },
		{ 't', KMS_OPTION_DOUBLE, &seconds, "SECONDS" },
		{ 'r', KMS_OPTION_UINT, &hz, "HZ" },
		{ 'm', KMS_OPTION_UINT, &moves_per_frame, "MOVES" },
		{ 0 }
	};
	int first, i;

	first = kms_options(argc, argv, 1, opts, "TEST...");
	kms_display_open(&disp, card);
	head = kms_display_head(&disp, head_index);
	head->mode = kms_mode_at_hz(&head->mode, hz);
	if (light(NULL)) {
		printf("not ok light head %u: %s\n", head_index,
		       strerror(errno));
		return 1;
	}
	for (i = first; i < argc; i++) {
		if (!strcmp(argv[i], "moves"))
			test_moves();
		else if (!strcmp(argv[i], "pinned"))
			test_pinned();
		else if (!strcmp(argv[i], "legacy"))
			test_legacy();
		else
			kms_result(false, "unknown test %s", argv[i]);
	}
	return kms_failures ? 1 : 0;
}
