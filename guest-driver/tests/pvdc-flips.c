// SPDX-License-Identifier: GPL-2.0-or-later OR MIT
/*
 * pvdc-flips: page flips land on the vblank after the one they were
 * submitted in, whatever else the device is asked meanwhile.
 *
 *   pvdc-flips [-d CARD] [-n FLIPS] [-c CHILDREN] [-r HZ] TEST...
 *
 * Every verdict comes from the device's vblank sequence numbers: the one
 * a flip is submitted in (drmCrtcGetSequence() right before the ioctl)
 * and the one its event carries.  No clock is compared with anything.
 *
 *   storm-legacy  head 0 flips FLIPS times (legacy page flips, each with
 *                 an event, the next one submitted from the event by a
 *                 real-time thread) while CHILDREN processes hammer head
 *                 1's cursor with legacy MOVECURSOR and SETCURSOR ioctls
 *                 as fast as they can: each flip's event carries the
 *                 vblank after the one it was submitted in, and one more
 *                 than the previous flip's (no frame missed).
 *   storm-atomic  the same with nonblocking atomic flips on head 0, and
 *                 half of the children moving head 1's cursor plane with
 *                 nonblocking atomic commits instead (EBUSY while one is
 *                 pending is counted, not an error).
 *   storm-spin    the same with children that spin in user space and
 *                 never call the driver: what the CPU time the children
 *                 take alone does to the flips (a baseline for the two
 *                 above, in bench/run.py).
 *   fresh         head 0 flips FLIPS times, each time to a buffer created
 *                 just before and never shown (nonblocking atomic, with an
 *                 event), submitted right after a vblank: the flip lands
 *                 on the vblank after the ioctl, and the ioctl returns in
 *                 the frame it was called in as often as one to a buffer
 *                 already shown does.  Then as many flips between two
 *                 such buffers; how long the ioctls took, fresh against
 *                 shown, is printed for bench/run.py.
 *
 *   moves         FLIPS legacy cursor moves on the last head, one after
 *                 the other, nothing else: bench/run.py counts the MMIO
 *                 accesses of a cursor move from runs of N and 2N.
 *
 * Both storms report "# storm ..." lines with the counts, for bench/run.py.
 */
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>

#include "pvdc-kms-util.h"

#define MAX_CHILDREN	16
#define ARRAY_LEN(a)	(sizeof(a) / sizeof((a)[0]))
/* The kernel itself gives up on a flip after 10 s. */
#define EVENT_TIMEOUT_MS	10000

static struct kms_display disp;
static unsigned int flips = 120, children = 2, hz = 60;

static int light(void)
{
	drmModeAtomicReq *req = drmModeAtomicAlloc();
	drmModeModeInfo mode[2];
	unsigned int i;

	for (i = 0; i < disp.num_heads && i < 2; i++) {
		mode[i] = kms_mode_at_hz(&disp.heads[i].mode, hz);
		disp.heads[i].mode = mode[i];
		kms_head_on(&disp, req, &disp.heads[i], &mode[i]);
	}
	return kms_commit(&disp, req, DRM_MODE_ATOMIC_ALLOW_MODESET, NULL);
}

/* The vblank head @h is in now, as the event of a flip counts them. */
static uint32_t current_seq(struct kms_head *h)
{
	uint64_t seq = 0, ns;

	if (drmCrtcGetSequence(disp.fd, h->crtc_id, &seq, &ns)) {
		printf("not ok get sequence: %s\n", strerror(errno));
		exit(1);
	}
	return (uint32_t)seq;
}

/* Block until the next vblank of @h has passed. */
static void next_vblank(struct kms_head *h)
{
	drmVBlank vbl = {
		.request.type = DRM_VBLANK_RELATIVE |
				((h->pipe << DRM_VBLANK_HIGH_CRTC_SHIFT) &
				 DRM_VBLANK_HIGH_CRTC_MASK),
		.request.sequence = 1,
	};

	drmWaitVBlank(disp.fd, &vbl);
}

/* The event of the one flip in flight. */
static struct {
	bool got;
	uint32_t seq;
} event;

static void flip_done(int fd, unsigned int seq, unsigned int sec,
		      unsigned int usec, unsigned int crtc, void *data)
{
	(void)fd; (void)sec; (void)usec; (void)crtc; (void)data;
	event.seq = seq;
	event.got = true;
}

/* The sequence of the event of the flip in flight; false on a timeout. */
static bool wait_event(uint32_t *seq)
{
	drmEventContext ev = { .version = 3, .page_flip_handler2 = flip_done };
	struct pollfd pfd = { .fd = disp.fd, .events = POLLIN };

	while (!event.got) {
		if (poll(&pfd, 1, EVENT_TIMEOUT_MS) <= 0)
			return false;
		drmHandleEvent(disp.fd, &ev);
	}
	event.got = false;
	*seq = event.seq;
	return true;
}

/* FB_ID of head 0's primary plane, looked up once. */
static uint32_t fb_id_prop;

/*
 * A nonblocking atomic flip of @h's primary plane to @fb, with an event.
 * Nothing else between the sequence read before and the commit: looking
 * a property up takes every modeset lock (GETPROPERTIES), and would wait
 * for the other head's commits.
 */
static int atomic_flip(struct kms_head *h, uint32_t fb)
{
	drmModeAtomicReq *req = drmModeAtomicAlloc();

	drmModeAtomicAddProperty(req, h->primary, fb_id_prop, fb);
	return kms_commit(&disp, req, DRM_MODE_ATOMIC_NONBLOCK |
			  DRM_MODE_PAGE_FLIP_EVENT, NULL);
}

/* ------------------------------------------------------------------------ */
/* storm-legacy, storm-atomic                                               */
/* ------------------------------------------------------------------------ */

/* Shared with the children: how many updates each made, refused, busy. */
struct child_count {
	volatile unsigned int updates, errors, busy;
};

static volatile sig_atomic_t child_stop;

static void child_on_term(int sig)
{
	(void)sig;
	child_stop = 1;
}

enum storm { STORM_LEGACY, STORM_ATOMIC, STORM_SPIN };

static const char *const storm_names[] = {
	[STORM_LEGACY] = "storm-legacy",
	[STORM_ATOMIC] = "storm-atomic",
	[STORM_SPIN] = "storm-spin",
};

/*
 * Hammer head 1's cursor until told to stop: legacy moves, a new image
 * every 16 of them, or (@atomic) nonblocking atomic moves of the plane.
 */
static void child_hammer(unsigned int n, bool atomic,
			 struct kms_buffer *images, struct child_count *count)
{
	struct kms_head *b = &disp.heads[1];
	uint32_t crtc_x = kms_prop_id(disp.fd, b->cursor,
				      DRM_MODE_OBJECT_PLANE, "CRTC_X");
	uint32_t crtc_y = kms_prop_id(disp.fd, b->cursor,
				      DRM_MODE_OBJECT_PLANE, "CRTC_Y");
	struct sched_param normal = { 0 };
	unsigned int i = n * 1000;

	/* Not the real-time priority of the flips of an earlier test. */
	sched_setscheduler(0, SCHED_OTHER, &normal);
	signal(SIGTERM, child_on_term);
	while (!child_stop) {
		uint32_t x, y;
		int ret;

		kms_cursor_place(b, i, &x, &y);
		if (atomic) {
			drmModeAtomicReq *req = drmModeAtomicAlloc();

			drmModeAtomicAddProperty(req, b->cursor, crtc_x, x);
			drmModeAtomicAddProperty(req, b->cursor, crtc_y, y);
			ret = kms_commit(&disp, req, DRM_MODE_ATOMIC_NONBLOCK,
					 NULL);
		} else if (i % 16 == 15) {
			ret = kms_cursor_set(disp.fd, b, &images[(i / 16) % 2]);
		} else {
			ret = drmModeMoveCursor(disp.fd, b->crtc_id, x, y) ?
			      -errno : 0;
		}
		if (ret == -EBUSY)
			count->busy++;
		else if (ret)
			count->errors++;
		else
			count->updates++;
		i++;
	}
	_exit(0);
}

/* Take CPU time, and nothing else, until told to stop. */
static void child_spin(struct child_count *count)
{
	struct sched_param normal = { 0 };

	sched_setscheduler(0, SCHED_OTHER, &normal);
	signal(SIGTERM, child_on_term);
	while (!child_stop)
		count->updates++;
	_exit(0);
}

static int storm_flip(struct kms_head *a, bool atomic, uint32_t fb)
{
	if (atomic)
		return atomic_flip(a, fb);
	return drmModePageFlip(disp.fd, a->crtc_id, fb,
			       DRM_MODE_PAGE_FLIP_EVENT, NULL) ? -errno : 0;
}

static void test_storm(enum storm storm)
{
	const char *name = storm_names[storm];
	bool atomic = storm == STORM_ATOMIC;
	struct kms_head *a = &disp.heads[0], *b = &disp.heads[1];
	struct child_count *counts;
	struct kms_buffer images[2];
	unsigned int i, late = 0, missed = 0, errors = 0, done = 0;
	unsigned int updates = 0, refused = 0, busy = 0;
	uint32_t prev = 0, first = 0, seq;
	pid_t pids[MAX_CHILDREN];

	if (disp.num_heads < 2) {
		kms_result(false, "%s: needs two heads", name);
		return;
	}
	kms_cursor_images(disp.fd, images);
	if (kms_cursor_set(disp.fd, b, &images[0])) {
		kms_result(false, "%s: set cursor: %s", name, strerror(errno));
		kms_cursor_images_off(disp.fd, b, images);
		return;
	}
	/* Both buffers shown once: binding one is the fresh test's. */
	for (i = 0; i < 2; i++) {
		if (atomic_flip(a, a->buf[(i + 1) % 2].fb_id) ||
		    !wait_event(&seq)) {
			kms_result(false, "%s: first flips: %s", name,
				   strerror(errno));
			return;
		}
	}
	counts = mmap(NULL, sizeof(*counts) * MAX_CHILDREN,
		      PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (counts == MAP_FAILED) {
		kms_result(false, "%s: mmap: %s", name, strerror(errno));
		return;
	}
	memset(counts, 0, sizeof(*counts) * MAX_CHILDREN);
	for (i = 0; i < children; i++) {
		pids[i] = fork();
		if (!pids[i] && storm == STORM_SPIN)
			child_spin(&counts[i]);
		else if (!pids[i])
			child_hammer(i, atomic && i % 2, images, &counts[i]);
	}

	/* The children take every CPU cycle the flips leave them. */
	kms_realtime();
	/*
	 * One flip that is not judged: fork() left this process's pages
	 * copy-on-write and the children are still starting, and the first
	 * flip after it pays for both, which is not what a storm costs.
	 */
	if (storm_flip(a, atomic, a->buf[1].fb_id) || !wait_event(&seq))
		errors++;
	for (i = 0; i < flips && !errors; i++) {
		uint32_t submitted = current_seq(a);
		int ret = storm_flip(a, atomic, a->buf[i % 2].fb_id);
		uint32_t returned = current_seq(a);

		if (ret || !wait_event(&seq)) {
			errors++;
			break;
		}
		if (seq != submitted + 1 && late++ < 8)
			printf("# flip %u submitted in vblank %u, the ioctl returned in %u, landed on %u\n",
			       i, submitted, returned, seq);
		if (done && seq != prev + 1)
			missed += seq - prev - 1;
		if (!done)
			first = seq;
		prev = seq;
		done++;
	}

	for (i = 0; i < children; i++)
		kill(pids[i], SIGTERM);
	for (i = 0; i < children; i++) {
		waitpid(pids[i], NULL, 0);
		updates += counts[i].updates;
		refused += counts[i].errors;
		busy += counts[i].busy;
	}
	printf("# storm %s: %u flips over %u frames, %u late, %u frames missed; %u %s by %u children (%u busy, %u refused)\n",
	       name, done, done ? prev - first : 0, late, missed, updates,
	       storm == STORM_SPIN ? "spins" : "cursor updates of head 1",
	       children, busy, refused);
	kms_result(!errors && done == flips && !late && !missed,
		   "%s-flips-land-on-the-next-vblank # %u of %u flips, %u late, %u frames missed",
		   name, done, flips, late, missed);
	if (storm != STORM_SPIN)
		kms_result(!refused && updates > done,
			   "%s-cursor-updates-go-on # %u updates, %u refused",
			   name, updates, refused);
	munmap(counts, sizeof(*counts) * MAX_CHILDREN);
	kms_cursor_images_off(disp.fd, b, images);
}

/* ------------------------------------------------------------------------ */
/* fresh                                                                    */
/* ------------------------------------------------------------------------ */

/*
 * Flip @a to @fb right after a vblank; whether the flip landed on the
 * vblank after the ioctl: the next one, or if a vblank passed while in the
 * ioctl (counted in @overran: a costly ioctl, or a task that was not
 * running meanwhile), the next one after that at the latest.  How long the
 * ioctl took goes to @ioctl_ns.
 */
static bool flip_in_frame(struct kms_head *a, uint32_t fb,
			  unsigned int *overran, uint64_t *ioctl_ns)
{
	uint32_t submitted, returned, seq;
	uint64_t t0;
	int ret;

	next_vblank(a);
	submitted = current_seq(a);
	t0 = kms_now_ns();
	ret = atomic_flip(a, fb);
	*ioctl_ns += kms_now_ns() - t0;
	returned = current_seq(a);
	if (ret || !wait_event(&seq)) {
		printf("# flip to fb %u: %s\n", fb,
		       ret ? strerror(-ret) : "no event");
		return false;
	}
	*overran += returned != submitted;
	return (int32_t)(seq - submitted) >= 1 &&
	       (int32_t)(seq - returned) <= 1;
}

static void test_fresh(void)
{
	struct kms_head *a = &disp.heads[0];
	uint64_t fresh_ns = 0, shown_ns = 0;
	unsigned int i, fresh_ok = 0, shown_ok = 0;
	unsigned int fresh_overran = 0, shown_overran = 0;
	struct kms_buffer prev = { 0 }, buf;

	for (i = 0; i < flips; i++) {
		if (kms_buffer_create(disp.fd, &buf, a->mode.hdisplay,
				      a->mode.vdisplay, DRM_FORMAT_XRGB8888)) {
			kms_result(false, "fresh: buffer %u: %s", i,
				   strerror(errno));
			return;
		}
		kms_buffer_fill(&buf, i);
		fresh_ok += flip_in_frame(a, buf.fb_id, &fresh_overran,
					  &fresh_ns);
		/* Shown until the next flip has latched. */
		kms_buffer_destroy(disp.fd, &prev);
		prev = buf;
	}
	for (i = 0; i < flips; i++)
		shown_ok += flip_in_frame(a, a->buf[i % 2].fb_id,
					  &shown_overran, &shown_ns);
	kms_buffer_destroy(disp.fd, &prev);

	printf("# fresh: flip ioctl to a fresh buffer %llu ns, to a shown one %llu ns (mean of %u)\n",
	       (unsigned long long)(fresh_ns / flips),
	       (unsigned long long)(shown_ns / flips), flips);
	kms_result(fresh_ok == flips,
		   "fresh-buffer-flips-land-on-the-next-vblank # %u of %u",
		   fresh_ok, flips);
	kms_result(shown_ok == flips,
		   "shown-buffer-flips-land-on-the-next-vblank # %u of %u",
		   shown_ok, flips);
	/*
	 * A flip that binds its buffer in the ioctl (a copy, a sleep) overruns
	 * the frame every time; the task not running for a while, now and
	 * then, whatever the buffer.  One such blip more than the shown
	 * buffers had is that, not the cost of a fresh buffer.
	 */
	kms_result(fresh_overran <= shown_overran + 1,
		   "fresh-buffer-flip-ioctls-return-in-their-frame # %u of %u overran, %u of the shown ones",
		   fresh_overran, flips, shown_overran);
}

/* ------------------------------------------------------------------------ */
/* moves                                                                    */
/* ------------------------------------------------------------------------ */

static void test_moves(void)
{
	struct kms_head *h = &disp.heads[disp.num_heads - 1];
	struct kms_buffer images[2];
	unsigned int i, refused = 0;
	uint32_t x, y;

	kms_cursor_images(disp.fd, images);
	if (kms_cursor_set(disp.fd, h, &images[0])) {
		kms_result(false, "moves: set cursor: %s", strerror(errno));
		kms_cursor_images_off(disp.fd, h, images);
		return;
	}
	for (i = 0; i < flips; i++) {
		kms_cursor_place(h, i, &x, &y);
		refused += !!drmModeMoveCursor(disp.fd, h->crtc_id, x, y);
	}
	kms_result(!refused, "cursor-moves # %u moves, %u refused", flips,
		   refused);
	kms_cursor_images_off(disp.fd, h, images);
}

int main(int argc, char **argv)
{
	const char *card = KMS_CARD;
	const struct kms_option opts[] = {
		{ 'd', KMS_OPTION_STRING, &card, "CARD" },
		{ 'n', KMS_OPTION_UINT, &flips, "FLIPS" },
		{ 'c', KMS_OPTION_UINT, &children, "CHILDREN" },
		{ 'r', KMS_OPTION_UINT, &hz, "HZ" },
		{ 0 }
	};
	unsigned int i;
	int first;

	first = kms_options(argc, argv, 1, opts, "TEST...");
	if (!flips || children > MAX_CHILDREN || !hz) {
		fprintf(stderr, "bad -n, -c or -r\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	kms_display_open(&disp, card);
	if (!disp.num_heads || !disp.heads[disp.num_heads - 1].cursor) {
		printf("not ok a head with a cursor: %u heads\n",
		       disp.num_heads);
		return 1;
	}
	if (light()) {
		printf("not ok light the heads: %s\n", strerror(errno));
		return 1;
	}
	fb_id_prop = kms_prop_id(disp.fd, disp.heads[0].primary,
				 DRM_MODE_OBJECT_PLANE, "FB_ID");
	if (kms_wanted(argc, argv, first, "moves"))
		test_moves();
	if (kms_wanted(argc, argv, first, "fresh"))
		test_fresh();
	for (i = 0; i < ARRAY_LEN(storm_names); i++)
		if (kms_wanted(argc, argv, first, storm_names[i]))
			test_storm(i);

	return kms_failures ? 1 : 0;
}
